import { describe, expect, it } from 'vitest';
import { inCliWords } from '../../src/cli/server/log.js';

describe('advice in CLI words (HT-10)', () => {
  it("HT-10 an older server's advice becomes the shimkit expect command, a path with $& or $$ in it kept as it is", () => {
    const report =
      "To answer it: api.expect({ method: 'GET', path: '/p$&q$$r' }, …) or api.enqueue(…).";
    expect(inCliWords(report, '/tmp/d')).toBe(
      "To answer it: shimkit expect /tmp/d --method GET --path '/p$&q$$r' --sse-chat TEXT (or --status N, --json RESPONSE), or shimkit enqueue /tmp/d --sse-chat TEXT.",
    );
  });
});

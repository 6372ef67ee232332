import { describe, expect, it } from 'vitest';
import { curl, server } from '../helpers/server.js';

describe('unmatchedAdvice: the call an unmatched 500 names (HT-10)', () => {
  it("HT-10 {method}, {path} and {shPath} are the request's, in the 500 and the log entry; the default names api.expect()", async () => {
    const api = await server({
      unmatchedAdvice: 'tool expect --method {method} --path {shPath} # {path}',
    });
    const out = await curl([`${api.url}/v1/it's?q=1`]);
    const message = JSON.parse(out.stdout.toString()).error.message as string;
    expect(message).toMatch(
      /To answer it: tool expect --method GET --path '\/v1\/it'\\''s' # \/v1\/it's\.$/,
    );
    expect(api.lastRequest()?.error).toBe(message);

    const plain = await server();
    const missed = await curl([`${plain.url}/v1/models`]);
    expect(JSON.parse(missed.stdout.toString()).error.message).toContain(
      "To answer it: api.expect({ method: 'GET', path: '/v1/models' }, …) or api.enqueue(…).",
    );
  });

  it('HT-10 an empty or non-text unmatchedAdvice is refused when given', async () => {
    await expect(server({ unmatchedAdvice: '' })).rejects.toThrow(
      /`unmatchedAdvice` option of createMockServer\(\).*a text that is not empty/,
    );
    await expect(server({ unmatchedAdvice: 3 as unknown as string })).rejects.toThrow(
      /unmatchedAdvice/,
    );
  });
});

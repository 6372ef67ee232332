// MB-19 at scale: 256 parallel calls with default options. npm run test:stress.
import { describe, expect, it } from 'vitest';
import { createMockBinary } from '../../src/index.js';
import { assertExactlyOnce, callInParallel, responses } from '../helpers/parallel.js';

describe('scale (stress)', () => {
  it('MB-19 256 parallel calls with default options: no timeout, none lost, none twice', async () => {
    await using git = createMockBinary('git', { responses: responses(256), onExhausted: 'fail' });
    const exits = await callInParallel(git, 256);
    expect(exits.map((e) => e.stderr.toString()).filter(Boolean)).toEqual([]);
    expect(exits.every((e) => e.code === 0)).toBe(true);
    expect(git.callCount()).toBe(256);
    assertExactlyOnce(git, exits);
    const claimed = git.calls().map((c) => c.response ?? 0);
    expect(claimed.sort((a, b) => a - b)).toEqual(Array.from({ length: 256 }, (_, i) => i + 1));
    expect(git.calls().every((c) => c.status === 'exited')).toBe(true);
    git.assertDone();
  });
});

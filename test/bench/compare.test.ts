// PERF-11: `npm run bench:compare` refuses what it cannot compare before it builds anything.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCommand, testDir } from '../helpers/index.js';

const REPO = new URL('../..', import.meta.url).pathname;
const SCRIPT = join(REPO, 'scripts', 'bench-compare.mjs');

async function compare(args: string[]) {
  const r = await runCommand(process.execPath, [SCRIPT, ...args], {
    cwd: REPO,
    env: { ...process.env, TMPDIR: testDir('shimkit-compare-') },
  });
  return { code: r.code, out: r.stdout.toString(), err: r.stderr.toString() };
}

describe('bench:compare, bad input', () => {
  it('PERF-11 a ref git does not know, a missing ref and an unknown option exit 2 naming the problem', async () => {
    const [unknownRef, none, badFlag, fewRounds, badIterations] = await Promise.all([
      compare(['no-such-ref-xyz']),
      compare([]),
      compare(['HEAD', '--roudns', '3']),
      compare(['HEAD', '--rounds', '1']),
      compare(['HEAD', '--iterations', '0']),
    ]);
    expect(unknownRef.code).toBe(2);
    expect(unknownRef.err).toContain('git knows no commit named "no-such-ref-xyz"');
    expect(none.code).toBe(2);
    expect(none.err).toContain('name one ref to compare with');
    expect(none.err).toContain('usage: npm run bench:compare -- <ref>');
    expect(badFlag.code).toBe(2);
    expect(badFlag.err).toContain('unknown option --roudns');
    expect(fewRounds.code).toBe(2);
    expect(fewRounds.err).toContain('--rounds takes a whole number of at least 2, got 1');
    expect(badIterations.code).toBe(2);
    expect(badIterations.err).toContain('--iterations takes a whole number above 0, got 0');
    for (const r of [unknownRef, none, badFlag, fewRounds, badIterations]) {
      expect(r.err).not.toContain('building');
    }
  });
});

// MB-07 MB-08 MB-02 under stress: ten rounds of 64 parallel calls, 64 through
// xargs, 64 released at the same instant, and a SIGKILL storm. npm run test:stress.
import { describe, expect, it } from 'vitest';
import { createMockBinary } from '../../src/index.js';
import { completion, runCommand, spawnTracked } from '../helpers/index.js';
import {
  assertExactlyOnce,
  expectEachClaimedOnce,
  expectUniqueWhenReleasedTogether,
  responses,
  seededRandom,
} from '../helpers/parallel.js';

const ROUNDS = Array.from({ length: 10 }, (_, i) => i + 1);

describe('exactly once under parallel calls (stress)', () => {
  it.each(ROUNDS)(
    'MB-07 64 parallel calls claim 64 responses exactly once, none lost (round %i of 10)',
    () => expectEachClaimedOnce(64),
  );

  it('MB-07 64 parallel calls through xargs -P 64 claim every response exactly once', async () => {
    await using git = createMockBinary('git', { responses: responses(64), onExhausted: 'fail' });
    const ids = `${Array.from({ length: 64 }, (_, k) => `c${k + 1}`).join('\n')}\n`;
    const r = await runCommand('xargs', ['-P', '64', '-n', '1', git.path], { input: ids });
    expect(r.stderr.toString()).toBe('');
    expect(r.code).toBe(0);
    // Each response is one write smaller than PIPE_BUF, so lines do not interleave.
    expect(r.stdout.toString().split('\n').filter(Boolean).sort()).toEqual(
      responses(64)
        .map((x) => x.stdout?.trim())
        .sort(),
    );
    expect(git.callCount()).toBe(64);
    git.assertDone();
  });

  it('MB-02 MB-07 exactly-once rests on the claim links alone: 64 calls released at the same instant stay unique', () =>
    expectUniqueWhenReleasedTogether(64));
});

describe('a killed call never holds up another (stress)', () => {
  it('MB-08 SIGKILLed calls during a 64-call storm: the rest finish, nothing is served twice, the next call is served at once', async () => {
    const seed = Date.now();
    const random = seededRandom(seed);
    await using git = createMockBinary('git', { responses: responses(64), onExhausted: 'fail' });
    const children = Array.from({ length: 64 }, (_, k) => spawnTracked(git.path, [`c${k + 1}`]));
    const exits = Promise.all(children.map(completion));
    const victims = children.filter(() => random() < 0.35);
    // Kill at random moments across the storm (start-up, claiming, writing).
    for (const victim of victims) setTimeout(() => victim.kill('SIGKILL'), random() * 400);
    const results = await exits;
    const survivors = results.filter((r) => r.signal === null);
    expect(survivors.length, `seed ${seed}`).toBeGreaterThan(0);
    for (const r of survivors) expect(r.code, `seed ${seed}: ${r.stderr}`).toBe(0);
    assertExactlyOnce(git, results);

    const next = await runCommand(git.path, ['after-storm']);
    const unused =
      64 -
      git.calls().filter((c) => c.responseSource === 'queue' && c.argv[0] !== 'after-storm').length;
    expect(next.code, `seed ${seed}: ${next.stderr}`).toBe(unused > 0 ? 0 : 123);
    const call = git.calls().find((c) => c.argv[0] === 'after-storm');
    // Served by the sh shim, a call has no claimMs; its whole run bounds the claim.
    const claimMs = call?.claimMs ?? (call?.endedAt as number) - (call?.startedAt as number);
    expect(claimMs, `seed ${seed}`).toBeLessThan(3000); // no wait on what the killed calls left
    assertExactlyOnce(git, results);
  });
});

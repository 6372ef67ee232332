// PERF-07 under stress: many random scenarios per shell through both paths, and
// a SIGKILL storm on a queue the shell and the runner share. npm run test:stress.
import { describe, expect, it } from 'vitest';
import { createMockBinary, type MockResponse } from '../../src/index.js';
import { MockExitCode } from '../../src/queue/exit-codes.js';
import {
  checkRoutedShAgreesWithRunner,
  checkShAgreesWithRunner,
  expectRoutedStormExactlyOnce,
  isShRecord,
  SHELLS,
} from '../helpers/fast-path.js';
import { completion, runCommand, spawnTracked } from '../helpers/index.js';
import { assertExactlyOnce, responses, seededRandom } from '../helpers/parallel.js';

const RUNS = 40;

describe('PERF-07 the sh shim and the runner agree (stress)', () => {
  for (const shell of SHELLS) {
    it.skipIf(!shell.path)(
      `PERF-07 MB-03 MB-05 random static and runner-only responses, raw argv, cwd and env bytes: byte-identical output, exit codes, files and call records on both paths (${shell.name}, ${RUNS} random scenarios)`,
      async () => {
        const shServed = await checkShAgreesWithRunner(shell.path as string, { numRuns: RUNS });
        // The property held for calls the shell did serve, not only for hand-overs.
        expect(shServed).toBeGreaterThan(RUNS / 2);
      },
    );
  }
});

describe('PERF-07 mixed queues stay exactly-once', () => {
  it('PERF-07 MB-02 MB-08 64 parallel calls on a queue of static and runner-only responses, with random SIGKILLs: each response at most once, survivors print what they claimed', async () => {
    const seed = Date.now();
    const random = seededRandom(seed);
    // Delays keep calls of both kinds in flight while the kills land.
    const queue: MockResponse[] = responses(64).map((r, i) =>
      i % 3 === 2
        ? { chunks: [{ stdout: r.stdout, delayMs: 40 }] }
        : { ...r, delayMs: 40 + Math.floor(random() * 80) },
    );
    await using git = createMockBinary('git', { responses: queue, onExhausted: 'fail' });
    const children = Array.from({ length: 64 }, (_, k) => spawnTracked(git.path, [`c${k + 1}`]));
    const exits = Promise.all(children.map(completion));
    const victims = children.filter(() => random() < 0.35);
    for (const victim of victims) setTimeout(() => victim.kill('SIGKILL'), random() * 150);
    const results = await exits;
    const survivors = results.filter((r) => r.signal === null);
    expect(survivors.length, `seed ${seed}`).toBeGreaterThan(0);
    for (const r of survivors) expect(r.code, `seed ${seed}: ${r.stderr}`).toBe(0);
    assertExactlyOnce(git, results);
    const calls = git.calls();
    const bySh = calls.filter((c) => isShRecord(git, c.index)).length;
    expect(bySh, `seed ${seed}: the shell served some`).toBeGreaterThan(0);
    expect(bySh, `seed ${seed}: the runner served some`).toBeLessThan(calls.length);
    // Killed calls left responses unused; the next call gets the first of them at once.
    const unused = queue.length - calls.filter((c) => c.responseSource === 'queue').length;
    const next = await runCommand(git.path, ['after']);
    expect(next.code, `seed ${seed}: ${next.stderr}`).toBe(unused > 0 ? 0 : MockExitCode.unmatched);
    assertExactlyOnce(git, results);
  });
});

describe('PERF-09 routed generations: the sh shim and the runner agree (stress)', () => {
  for (const shell of SHELLS) {
    it.skipIf(!shell.path)(
      `PERF-09 MB-13 random literal, any(), RegExp, cwd and env routes with times: byte-identical output, exit codes, files and call records on both paths (${shell.name}, ${RUNS} random scenarios)`,
      async () => {
        const shServed = await checkRoutedShAgreesWithRunner(shell.path as string, {
          numRuns: RUNS,
        });
        expect(shServed).toBeGreaterThan(RUNS / 2);
      },
    );
  }
  for (const shell of SHELLS) {
    it.skipIf(!shell.path)(
      `PERF-09 MB-02 MB-08 64 parallel routed calls with times, static and runner-only responses, random SIGKILLs: no response past its times, survivors print what they claimed (${shell.name})`,
      () => expectRoutedStormExactlyOnce(shell.path as string, 64, Date.now()),
    );
  }
});

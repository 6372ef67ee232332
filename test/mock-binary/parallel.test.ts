import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMockBinary, MockExitCode } from '../../src/index.js';
import type { CallStep } from '../../src/queue/types.js';
import { completion, python3, runCommand, spawnTracked, testDir } from '../helpers/index.js';
import {
  assertExactlyOnce,
  callInParallel,
  expectEachClaimedOnce,
  expectUniqueWhenReleasedTogether,
  responses,
} from '../helpers/parallel.js';
import { generationDir, stopCallsAt, waitUntilStopped } from '../helpers/protocol.js';

describe('exactly once under parallel calls', () => {
  // Nine more rounds, 64 calls through xargs and a 64-way release are in parallel.stress.test.ts.
  it('MB-07 64 parallel calls claim 64 responses exactly once, none lost', () =>
    expectEachClaimedOnce(64));

  it('MB-02 MB-07 exactly-once rests on the claim links alone: 16 calls released at the same instant stay unique', () =>
    expectUniqueWhenReleasedTogether(16));

  it('REL-02 MB-07 exactly once under random interleavings of calls and enqueues (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 12 }), // responses queued up front
        fc.integer({ min: 1, max: 12 }), // parallel calls
        fc.integer({ min: 0, max: 6 }), // responses enqueued while calls run
        async (upFront, calls, later) => {
          await using git = createMockBinary('git', { responses: responses(upFront) });
          const children = Array.from({ length: calls }, (_, k) =>
            spawnTracked(git.path, [`c${k + 1}`]),
          );
          const done = Promise.all(children.map(completion));
          git.enqueue(responses(upFront + later).slice(upFront));
          const exits = await done;
          expect(exits.every((e) => e.code === 0)).toBe(true);
          expect(git.callCount()).toBe(calls);
          assertExactlyOnce(git, exits);
          const fromQueue = git.calls().filter((c) => c.responseSource === 'queue').length;
          expect(fromQueue).toBeGreaterThanOrEqual(Math.min(calls, upFront));
          expect(fromQueue).toBeLessThanOrEqual(Math.min(calls, upFront + later));
        },
      ),
      { numRuns: 6 },
    );
  });
});

const STEPS: CallStep[] = ['started', 'recorded', 'claimed', 'decided', 'served'];

describe('a stopped or killed call never holds up another', () => {
  it.each(STEPS)(
    'MB-08 MB-19 a call stopped at step "%s" holds nobody up, and SIGKILLed there leaves the queue intact',
    async (step) => {
      await using git = createMockBinary('git', { responses: responses(2), onExhausted: 'fail' });
      stopCallsAt(git, step);
      const victim = spawnTracked(git.path, ['victim']);
      const died = completion(victim);
      await waitUntilStopped(victim.pid);
      stopCallsAt(git, undefined);

      // While it is stopped mid-way, another call is served at once.
      const other = await runCommand(git.path, ['while-stopped']);
      expect([other.code, other.stderr.toString()]).toEqual([0, '']);
      victim.kill('SIGKILL');
      expect((await died).signal).toBe('SIGKILL');
      const next = await runCommand(git.path, ['next']);

      // Until its claim marker exists the victim has claimed nothing; from then on response 1 is its.
      const claimedByVictim = step === 'claimed' || step === 'decided' || step === 'served';
      expect(other.stdout.toString()).toBe(claimedByVictim ? 'r2\n' : 'r1\n');
      expect(next.code, next.stderr.toString()).toBe(claimedByVictim ? MockExitCode.unmatched : 0);
      expect(next.stdout.toString()).toBe(claimedByVictim ? '' : 'r2\n');
      const calls = git.calls();
      const summary = calls.map((c) => [c.argv[0], c.status, c.response ?? null]);
      const victimRecord =
        step === 'started' ? [] : [['victim', 'killed', claimedByVictim ? 1 : null]];
      expect(summary).toEqual([
        ...victimRecord,
        ['while-stopped', 'exited', claimedByVictim ? 2 : 1],
        ['next', claimedByVictim ? 'unmatched' : 'exited', claimedByVictim ? null : 2],
      ]);
      // A call the sh shim served has no claimMs; its whole run bounds the claim.
      for (const call of calls.slice(-2)) {
        expect(call.claimMs ?? (call.endedAt as number) - call.startedAt).toBeLessThan(3000);
      }
    },
  );

  it('MB-02 a call record is never seen half-written (16 parallel calls, read as they are written)', async () => {
    await using git = createMockBinary('git', { responses: responses(16), recordEnv: true });
    const calls = join(generationDir(git), 'calls');
    const dir = testDir();
    // A watcher that reads every record as fast as it can: each must be whole JSON lines.
    const watcher = spawnTracked(python3(), [
      '-c',
      `import os, sys, json
calls, stop = sys.argv[1], sys.argv[2]
seen = bad = 0
print("ready", flush=True)
while not os.path.exists(stop):
    for name in os.listdir(calls):
        if name.startswith("."): continue
        try:
            with open(os.path.join(calls, name)) as f: text = f.read()
        except OSError: continue
        seen += 1
        whole = text[: text.rfind("\\n") + 1]
        try:
            lines = [json.loads(l) for l in whole.splitlines()]
            if not lines or "argv" not in lines[0]: raise ValueError(text)
        except ValueError: bad += 1; print("BAD", repr(text), flush=True)
print("seen", seen, "bad", bad, flush=True)`,
      calls,
      join(dir, 'stop'),
    ]);
    const watched = completion(watcher);
    await new Promise<void>((ready) => watcher.stdout?.once('data', () => ready()));
    await callInParallel(git, 16);
    writeFileSync(join(dir, 'stop'), '');
    const out = (await watched).stdout.toString();
    expect(out).toMatch(/^ready\nseen \d+ bad 0\n$/);
    expect(Number(/seen (\d+)/.exec(out)?.[1])).toBeGreaterThan(0);
  });
});

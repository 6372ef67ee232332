import { expect } from 'vitest';
import { createMockBinary, type MockBinary, type MockResponse } from '../../src/index.js';
import { completion, type Exit, spawnTracked } from './index.js';
import { stopCallsAt, waitUntilStopped } from './protocol.js';

/** Start `n` calls of the mock at once (call k gets the single argument `c<k>`) and await them all. */
export async function callInParallel(mock: MockBinary, n: number): Promise<Exit[]> {
  const children = Array.from({ length: n }, (_, k) => spawnTracked(mock.path, [`c${k + 1}`]));
  return Promise.all(children.map(completion));
}

/** A tiny seeded PRNG (mulberry32), so a random storm can be replayed from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Check the exactly-once invariants of a finished parallel run: every queue
 * response was claimed by at most one call, and every call that exited printed
 * exactly the response its record says it claimed.
 */
export function assertExactlyOnce(mock: MockBinary, exits: Exit[]): void {
  const calls = mock.calls();
  const claimed = calls.filter((c) => c.responseSource === 'queue').map((c) => c.response);
  if (new Set(claimed).size !== claimed.length) {
    throw new Error(`a response was claimed twice: ${JSON.stringify(claimed)}`);
  }
  const byArg = new Map(calls.map((c) => [c.argv[0], c]));
  for (const [k, exit] of exits.entries()) {
    if (exit.code !== 0) continue;
    const call = byArg.get(`c${k + 1}`);
    if (!call) throw new Error(`call c${k + 1} exited 0 but left no record`);
    if (exit.stdout.toString() !== `r${call.response}\n`) {
      throw new Error(
        `call c${k + 1} printed ${JSON.stringify(exit.stdout.toString())} but claimed response #${call.response}`,
      );
    }
  }
}

/** `n` responses printing r1 … rn, one line each (what assertExactlyOnce() checks calls printed). */
export const responses = (n: number): MockResponse[] =>
  Array.from({ length: n }, (_, i) => ({ stdout: `r${i + 1}\n` }));

/** MB-07: `n` parallel calls on a queue of `n` responses: each printed and claimed once, none lost. */
export async function expectEachClaimedOnce(n: number): Promise<void> {
  await using git = createMockBinary('git', { responses: responses(n), onExhausted: 'fail' });
  const exits = await callInParallel(git, n);
  expect(exits.map((e) => e.stderr.toString()).filter(Boolean)).toEqual([]);
  expect(exits.every((e) => e.code === 0)).toBe(true);
  const printed = exits.map((e) => e.stdout.toString()).sort();
  expect(printed).toEqual(
    responses(n)
      .map((r) => r.stdout)
      .sort(),
  );
  expect(git.callCount()).toBe(n);
  const claimed = git.calls().map((c) => c.response ?? 0);
  expect(claimed.sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
  assertExactlyOnce(git, exits);
  git.assertDone();
}

/**
 * MB-02 MB-07: exactly-once rests on the claim links alone. Every one of `n`
 * calls stops right after reading the state, before it looks for a free
 * number; then all go at once, so they race for the same numbers.
 */
export async function expectUniqueWhenReleasedTogether(n: number): Promise<void> {
  await using git = createMockBinary('git', { responses: responses(n), onExhausted: 'fail' });
  stopCallsAt(git, 'started');
  const children = Array.from({ length: n }, (_, k) => spawnTracked(git.path, [`c${k + 1}`]));
  const exits = Promise.all(children.map(completion));
  // n runners start at once on few cores: a long deadline for the whole burst.
  for (const child of children) await waitUntilStopped(child.pid, 30_000);
  stopCallsAt(git, undefined);
  for (const child of children) child.kill('SIGCONT');
  const results = await exits;
  expect(results.map((e) => e.stderr.toString()).filter(Boolean)).toEqual([]);
  expect(results.every((e) => e.code === 0)).toBe(true);
  assertExactlyOnce(git, results);
  expect(git.callCount()).toBe(n);
  git.assertDone();
}

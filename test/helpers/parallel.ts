import type { MockBinary } from '../../src/index.js';
import { completion, type Exit, spawnTracked } from './index.js';

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

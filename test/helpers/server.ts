import { onTestFinished } from 'vitest';
import { createMockServer, type MockServer, type MockServerOptions } from '../../src/index.js';
import { type Exit, runCommand } from './index.js';

/** A mock server disposed when the test finishes (after its own assertions). */
export async function server(options?: MockServerOptions): Promise<MockServer> {
  const api = await createMockServer(options);
  onTestFinished(async () => {
    try {
      await api.dispose();
    } catch {
      // a strict report is the test's business; cleanup happened before it threw
    }
  });
  return api;
}

/** Run curl (never through a proxy, at most 10 s), in its own process. */
export function curl(args: readonly string[]): Promise<Exit> {
  return runCommand('curl', ['-sS', '--noproxy', '*', '--max-time', '10', ...args]);
}

/** The args of curl that POSTs `json` to `url`. */
export function postJson(url: string, json: unknown): string[] {
  return [
    '-X',
    'POST',
    '-H',
    'content-type: application/json',
    '--data-binary',
    JSON.stringify(json),
    url,
  ];
}

/** Poll `read` until it gives the same value `times` times in a row, 100 ms apart (deadline 10 s). */
export async function settled(read: () => number, times = 4): Promise<number> {
  const deadline = Date.now() + 10_000;
  let last = read();
  let same = 0;
  while (same < times) {
    if (Date.now() > deadline) throw new Error(`still changing after 10 s: ${last}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = read();
    same = now === last ? same + 1 : 0;
    last = now;
  }
  return last;
}

/**
 * A promise that settles after `ms`: the body of a slow `.then()` or
 * response function under test (what takes time is the subject), never a
 * wait for a condition (REL-01: tests poll with deadlines for those).
 */
export function slowWork(ms: number): Promise<void> {
  return new Promise((done) => {
    setTimeout(done, ms);
  });
}

/** One turn of the event loop: the microtasks a drained event queued have run. */
export function nextTurn(): Promise<void> {
  return new Promise((done) => setImmediate(done));
}

import type { EntryLog } from './log.js';

/**
 * The worker's half of a settled read (`requests()`, `lastRequest()`,
 * `assertDone()` while a response is unfinished): after two turns of the
 * loop — the first lets the poll phase deliver a FIN or an error the kernel
 * already has, the second the close callbacks that follow it — post every
 * pending counter, then store `n` in `flag[0]` and wake the test's thread,
 * which waits on it with `Atomics.wait` (bounded: src/server/settle.ts).
 */
export function settle(log: EntryLog, flag: Int32Array, n: number): void {
  setImmediate(() =>
    setImmediate(() => {
      log.flush();
      Atomics.store(flag, 0, n);
      Atomics.notify(flag, 0);
    }),
  );
}

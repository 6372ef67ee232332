const cell = new Int32Array(new SharedArrayBuffer(4));

/** Block this thread for `ms` milliseconds (the runner is synchronous while it claims). */
export function sleepSync(ms: number): void {
  if (ms > 0) Atomics.wait(cell, 0, 0, ms);
}

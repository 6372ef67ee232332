import type { ServerLink } from './link.js';
import type { Mirror } from './mirror.js';

/**
 * How long a read waits for the worker to settle, at most. It answers in
 * well under a millisecond when idle; the bound only keeps a read from
 * hanging on a worker that is late (the read then gives what it has).
 */
export const SETTLE_MS = 25;

/**
 * Settled reads (decision 009, "client-abort"): the log is posted before
 * the bytes it describes, but a client that leaves — a FIN or a reset after
 * it read what it wanted and exited — can only be logged once the worker
 * saw it. So `requests()`, `lastRequest()` and `assertDone()`, while some
 * response of the log is not finished (no `endedAt`), make one synchronous
 * round trip to the worker: a `sync` message, then `Atomics.wait` on a
 * shared flag the worker sets after two turns of its loop, bounded by
 * SETTLE_MS; then the events port is drained. A client that left before
 * the call (its FIN or reset at the server's socket) is therefore logged
 * `client-abort` by then; one that leaves during or after the call is seen
 * by the next read or wait.
 */
export class Settler {
  readonly #link: ServerLink;
  readonly #mirror: Mirror;
  readonly #flag = new Int32Array(new SharedArrayBuffer(4));
  #n = 0;

  constructor(link: ServerLink, mirror: Mirror) {
    this.#link = link;
    this.#mirror = mirror;
  }

  /** Settle if a logged response is unfinished (after a drain, which the caller made). */
  settle(): void {
    if (this.#link.failure) return;
    if (this.#mirror.unfinished === 0) return;
    const n = ++this.#n;
    const flag = this.#flag;
    this.#link.post({ type: 'sync', flag, n });
    const deadline = performance.now() + SETTLE_MS;
    for (;;) {
      const seen = Atomics.load(flag, 0);
      if (seen >= n) break;
      const left = deadline - performance.now();
      if (left <= 0) break;
      Atomics.wait(flag, 0, seen, left);
    }
    this.#link.drain();
  }
}

import type { ChildProcess } from 'node:child_process';

/** The part of a `net.Socket` (a child's stdio pipe) that decides whether it keeps Node alive. */
interface Refable {
  readonly destroyed: boolean;
  ref(): unknown;
  unref(): unknown;
}

/**
 * What keeps the event loop alive for one TestProcess (requirement SP-10). While
 * the test only holds the process, nothing: the child handle and its stdio
 * pipes are unref'd, so a forgotten process never keeps a test runner from
 * exiting (the exit hook then ends its tree). While something is awaited —
 * `wait()`, `waitForOutput()`, `send()`, `close()`, a whole `run()` — they are
 * ref'd, because awaiting a promise does not keep Node alive by itself and a
 * runner that sees an empty event loop would end the test unfinished.
 */
export class Keepalive {
  readonly #child: ChildProcess;
  #holds = 0;

  /** Starts unref'd. */
  constructor(child: ChildProcess) {
    this.#child = child;
    this.#apply(false);
  }

  /** Whether something is awaited right now. */
  get held(): boolean {
    return this.#holds > 0;
  }

  /** Keep Node alive until the returned function is called (idempotent). Holds nest. */
  hold(): () => void {
    if (this.#holds++ === 0) this.#apply(true);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.#holds === 0) this.#apply(false);
    };
  }

  /** `promise`, with Node kept alive until it settles. Returns `promise` itself. */
  during<T>(promise: Promise<T>): Promise<T> {
    const release = this.hold();
    promise.then(release, release);
    return promise;
  }

  #apply(ref: boolean): void {
    const child = this.#child;
    if (ref) child.ref();
    else child.unref();
    for (const stream of child.stdio ?? []) {
      const pipe = stream as unknown as Refable | null;
      // A destroyed socket has no handle left; ref() would only queue a listener.
      if (!pipe || pipe.destroyed || typeof pipe.ref !== 'function') continue;
      if (ref) pipe.ref();
      else pipe.unref();
    }
  }
}

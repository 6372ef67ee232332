import { checkMs, checkOptionKeys } from '../internal/options.js';

/**
 * The server's waits (`waitForRequests()`, `waitSatisfied()`, a hold's
 * `waitReceived()`/`waitBlocked()`): each checks its condition after every
 * event the worker posts, keeps Node alive while pending (`ref`), and ends
 * early when it no longer can be met — `dispose()`, a worker failure, or a
 * `reset()` for the waits of the generation it ended.
 */

interface Pending {
  gen: number | undefined;
  what: string;
  check(): void;
  fail(error: Error): void;
}

export class Waits {
  readonly #pending = new Set<Pending>();
  readonly #ref: () => () => void;

  constructor(ref: () => () => void) {
    this.#ref = ref;
  }

  /**
   * Resolve with `check()`'s value once it is not undefined; reject with
   * what it throws (a condition that can no longer be met), or with
   * `onTimeout()` after `timeoutMs`. `gen` ties the wait to a generation.
   */
  until<T>(options: {
    what: string;
    gen?: number;
    timeoutMs: number;
    check: () => T | undefined;
    onTimeout: () => Error;
  }): Promise<T> {
    let first: T | undefined;
    try {
      first = options.check();
    } catch (error) {
      return Promise.reject(error);
    }
    if (first !== undefined) return Promise.resolve(first);
    const release = this.#ref();
    return new Promise<T>((resolve, reject) => {
      const settle = () => {
        this.#pending.delete(pending);
        clearTimeout(timer);
        release();
      };
      const pending: Pending = {
        gen: options.gen,
        what: options.what,
        check: () => {
          let value: T | undefined;
          try {
            value = options.check();
          } catch (error) {
            pending.fail(error as Error);
            return;
          }
          if (value === undefined) return;
          settle();
          resolve(value);
        },
        fail: (error) => {
          settle();
          reject(error);
        },
      };
      const timer = setTimeout(() => pending.fail(options.onTimeout()), options.timeoutMs);
      this.#pending.add(pending);
    });
  }

  /** Something changed: settle the waits it meets. */
  notify(): void {
    if (this.#pending.size === 0) return;
    for (const pending of [...this.#pending]) pending.check();
  }

  /** Reject every wait (of generation `gen` only, when given) with `error(what)`. */
  fail(error: (what: string) => Error, gen?: number): void {
    for (const pending of [...this.#pending]) {
      if (gen === undefined || pending.gen === gen) pending.fail(error(pending.what));
    }
  }
}

/** The `timeoutMs` option of a wait, checked: `where` names the call. */
export function waitTimeout(
  options: { timeoutMs?: number } | undefined,
  where: string,
  fallback: number,
): number {
  const o = checkOptionKeys(options, ['timeoutMs'], where);
  return checkMs(where, 'timeoutMs', o.timeoutMs, fallback, 1);
}

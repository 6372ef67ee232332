import { describeValue } from '../internal/describe.js';
import { InvalidOptionError, WaitTimeoutError } from '../internal/errors.js';
import { DEFAULT_WAIT_MS } from '../internal/limits.js';
import { checkMs, checkOptionKeys } from '../internal/options.js';
import { count } from './words.js';

/** @internal What a hold needs from the outboxes it holds frames in. */
export interface Holder {
  /** Write what the opened hold let go. */
  kick(): void;
}

/**
 * @internal Why a wait can never be met (the proxy closed, a stdio child is
 * gone): the error for a wait on `what` that got `got` (received of expected).
 */
export type WaitEnd = (what: string, got: string, received: number, expected: number) => Error;

/**
 * Frames caught by `proxy.hold(rule)`: they stay in flight (and the frames
 * behind them in the same direction of the same connection queue up, in
 * order) until `release()`. A barrier for race tests, like a mock binary's
 * `hold()`.
 *
 * @example
 * const gate = proxy.hold({ direction: 's2c', frame: 1 });
 * client.write(encodeFrame('ping'));
 * await gate.waitHeld();          // the reply is at the proxy, not at the client
 * // … do what must happen before the reply arrives …
 * gate.release();                 // it goes out now, then anything queued behind it
 */
export class FrameHold {
  #held = 0;
  #caught = 0;
  #open = false;
  readonly #holders = new Set<Holder>();
  readonly #waiters = new Set<() => void>();
  readonly #describe: string;
  readonly #onRelease: () => void;
  #ended: WaitEnd | undefined;

  /** @internal Use `proxy.hold()`. */
  static create(describe: string, onRelease: () => void): FrameHold {
    return new FrameHold(describe, onRelease);
  }

  private constructor(describe: string, onRelease: () => void) {
    this.#describe = describe;
    this.#onRelease = onRelease;
  }

  /** Frames held now (0 once released; a frame whose connection closed while held is no longer counted). */
  get held(): number {
    return this.#held;
  }

  /** Frames this hold caught since it was made. */
  get caught(): number {
    return this.#caught;
  }

  /** Whether `release()` was called: the frames went on, and no more are caught. */
  get released(): boolean {
    return this.#open;
  }

  /**
   * @internal A frame was caught in `holder`'s queue; false if this hold was
   * released meanwhile (the frame matched at its first byte, ended after the release).
   */
  catch(holder: Holder): boolean {
    if (this.#open) return false;
    this.#held += 1;
    this.#caught += 1;
    this.#holders.add(holder);
    for (const check of [...this.#waiters]) check();
    return true;
  }

  /** @internal `holder` closed (its connection ended) with `frames` of this hold's frames still in it: they are gone. */
  drop(holder: Holder, frames: number): void {
    this.#holders.delete(holder);
    if (!this.#open) this.#held = Math.max(0, this.#held - frames);
  }

  /**
   * @internal No frame can be caught any more (the proxy closed, or the
   * stdio child can no longer send that way): waits not met, pending or
   * later, reject with `end`'s error.
   */
  end(end: WaitEnd): void {
    if (this.#ended) return;
    this.#ended = end;
    for (const check of [...this.#waiters]) check();
  }

  /**
   * Resolve once `n` frames (default 1) have been caught. Rejects with a
   * `WaitTimeoutError` after `timeoutMs` (default 4000 ms), and at once when
   * no frame can be caught any more: a `DisposedError` once the proxy is
   * closed, a `StreamEndedError` once a `proxyStdio()` child can no longer
   * send the frames the hold is waiting for.
   */
  waitHeld(n = 1, options: { timeoutMs?: number } = {}): Promise<void> {
    const where = 'hold.waitHeld()';
    if (!Number.isInteger(n) || n < 1) {
      throw new InvalidOptionError(
        `Expected the frame count of ${where} to be an integer >= 1, got ${describeValue(n)}.`,
      );
    }
    checkOptionKeys(options, ['timeoutMs'], where);
    const timeoutMs = checkMs(where, 'timeoutMs', options.timeoutMs, DEFAULT_WAIT_MS);
    if (this.#caught >= n) return Promise.resolve();
    const what = `hold.waitHeld() waited for ${count(n, 'frame')} matching ${this.#describe}`;
    if (this.#ended) return Promise.reject(this.#ended(what, this.#got(), this.#caught, n));
    return new Promise((resolve, reject) => {
      const check = () => {
        const ended = this.#ended;
        if (this.#caught < n && !ended) return;
        this.#waiters.delete(check);
        clearTimeout(timer);
        if (this.#caught >= n) resolve();
        else reject((ended as WaitEnd)(what, this.#got(), this.#caught, n));
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(
          new WaitTimeoutError(
            `hold.waitHeld(): waited ${timeoutMs} ms for ${count(n, 'frame')} matching ${this.#describe}; ${this.#got()}.`,
          ),
        );
      }, timeoutMs);
      this.#waiters.add(check);
    });
  }

  #got(): string {
    return `caught ${this.#caught}${this.#open ? ' (the hold was released)' : ''}`;
  }

  /** Let the held frames go, in order, and catch no more. Calling it again does nothing. */
  release(): void {
    if (this.#open) return;
    this.#open = true;
    this.#held = 0;
    this.#onRelease();
    for (const holder of this.#holders) holder.kick();
    this.#holders.clear();
  }

  /** @internal Whether frames in a queue behind this hold may go. */
  get open(): boolean {
    return this.#open;
  }
}

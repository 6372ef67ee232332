import { describeValue } from '../internal/describe.js';
import { InvalidOptionError } from '../internal/errors.js';
import { checkOptionKeys } from '../internal/options.js';

/**
 * The time source of the proxy's `delay` faults. Inject one to drive delays
 * from a test's fake clock instead of real time: {@link manualClock}, or any
 * object with these three methods.
 */
export interface Clock {
  /** The current time in milliseconds. */
  now(): number;
  /** Run `fn` once `ms` milliseconds have passed; returns a handle for `clearTimeout`. */
  setTimeout(fn: () => void, ms: number): unknown;
  /** Cancel a timer `setTimeout` returned; an unknown or spent handle is ignored. */
  clearTimeout(handle: unknown): void;
}

/** @internal */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** A {@link Clock} whose time moves only when the test says so. Create it with {@link manualClock}. */
export interface ManualClock extends Clock {
  /**
   * Move time forward by `ms`, running every timer that falls due on the way,
   * in due order (in the order they were set when due together), each with
   * `now()` at its due time. Timers set by those callbacks run too if they
   * fall due within the same `ms`.
   */
  advance(ms: number): void;
  /** How many timers are waiting to run. */
  pending(): number;
}

export interface ManualClockOptions {
  /**
   * What `now()` returns until the first `advance()`, in milliseconds (>= 0).
   * @default 0
   */
  now?: number;
}

/**
 * A clock for the proxy's `clock` option that never moves by itself: a
 * `delay` fault holds its frame until the test calls `advance()`.
 *
 * @example
 * const clock = manualClock();
 * await using proxy = await createFrameProxy({ listen, upstream, clock,
 *   faults: { direction: 's2c', delay: '30s' } });
 * // … a reply is on its way
 * await expect.poll(() => clock.pending()).toBe(1); // held
 * clock.advance(30_000);                             // thirty seconds pass at once
 */
export function manualClock(options: ManualClockOptions = {}): ManualClock {
  checkOptionKeys(options, ['now'], 'manualClock()');
  let now = options.now ?? 0;
  if (typeof now !== 'number' || !Number.isFinite(now) || now < 0) {
    throw new InvalidOptionError(
      `Expected the \`now\` option of manualClock() to be a number of milliseconds >= 0, got ${describeValue(now)}.`,
    );
  }
  interface Timer {
    at: number;
    order: number;
    fn: () => void;
  }
  const timers = new Set<Timer>();
  let order = 0;
  const next = (until: number): Timer | undefined => {
    let first: Timer | undefined;
    for (const timer of timers) {
      if (timer.at > until) continue;
      if (!first || timer.at < first.at || (timer.at === first.at && timer.order < first.order)) {
        first = timer;
      }
    }
    return first;
  };
  return {
    now: () => now,
    setTimeout(fn, ms) {
      const delay = typeof ms === 'number' && ms > 0 ? ms : 0; // as Node: NaN or negative is 0
      const timer: Timer = { at: now + delay, order: order++, fn };
      timers.add(timer);
      return timer;
    },
    clearTimeout(handle) {
      timers.delete(handle as Timer);
    },
    pending: () => timers.size,
    advance(ms) {
      if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
        throw new InvalidOptionError(
          `Expected the time passed to clock.advance() to be a number of milliseconds >= 0, got ${describeValue(ms)}.`,
        );
      }
      const until = now + ms;
      for (let timer = next(until); timer; timer = next(until)) {
        timers.delete(timer);
        now = Math.max(now, timer.at);
        timer.fn();
      }
      now = until;
    },
  };
}

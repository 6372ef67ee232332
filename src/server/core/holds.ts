import type { WireRequestMatch } from '../protocol.js';
import type { WireHttpResponse } from '../types.js';
import { fits, type RequestView } from './fit.js';
import type { EntryLog } from './log.js';

/** How a held response goes on. */
export type HoldOutcome =
  | { kind: 'released'; response: WireHttpResponse | undefined }
  | { kind: 'timeout'; ms: number }
  /** reset() or dispose(): `why` says which. */
  | { kind: 'ended'; why: string };

/**
 * One `hold()` (design §4 Barriers): it catches the first request claimed
 * after it was registered whose parts fit its match; that request's writer
 * pauses at the hold point (before the headers, or after event N) until
 * `release()`, `reset()`, `dispose()` or `timeoutMs`.
 */
export class WorkerHold {
  readonly id: number;
  readonly gen: number;
  readonly match: WireRequestMatch | undefined;
  readonly afterEvents: number | undefined;
  seq: number | undefined;
  #released: { response: WireHttpResponse | undefined } | undefined;
  #ended: string | undefined;
  #wake: ((outcome: HoldOutcome) => void) | undefined;

  constructor(
    id: number,
    gen: number,
    match: WireRequestMatch | undefined,
    afterEvents: number | undefined,
  ) {
    this.id = id;
    this.gen = gen;
    this.match = match;
    this.afterEvents = afterEvents;
  }

  /**
   * Pause here: resolves at release (at once if it came first), timeout or
   * end. `fixed` says why a replacement cannot follow the bytes already
   * sent (the test's thread then refuses one in release()).
   */
  block(log: EntryLog, timeoutMs: number, fixed?: string): Promise<HoldOutcome> {
    if (this.#ended !== undefined) return Promise.resolve({ kind: 'ended', why: this.#ended });
    if (this.#released) return Promise.resolve({ kind: 'released', ...this.#released });
    // At a barrier the counters are exact: what was written so far goes first.
    log.flush();
    log.post({
      type: 'held',
      gen: this.gen,
      id: this.id,
      seq: this.seq ?? 0,
      stage: 'blocked',
      ...(fixed === undefined ? {} : { fixed }),
    });
    return new Promise<HoldOutcome>((resolve) => {
      const timer = setTimeout(() => this.#settle({ kind: 'timeout', ms: timeoutMs }), timeoutMs);
      this.#wake = (outcome) => {
        clearTimeout(timer);
        resolve(outcome);
      };
    });
  }

  release(response: WireHttpResponse | undefined): void {
    if (this.#released || this.#ended !== undefined) return;
    this.#released = { response };
    this.#settle({ kind: 'released', response });
  }

  end(why: string): void {
    if (this.#ended !== undefined) return;
    this.#ended = why;
    this.#settle({ kind: 'ended', why });
  }

  #settle(outcome: HoldOutcome): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.(outcome);
  }
}

/** The holds of the current script, in the order they were made. */
export class Holds {
  #list: WorkerHold[] = [];

  add(hold: WorkerHold): void {
    this.#list.push(hold);
  }

  get(id: number): WorkerHold | undefined {
    return this.#list.find((h) => h.id === id);
  }

  /** The first free hold that fits, now bound to `seq`. */
  bind(view: RequestView, seq: number): WorkerHold | undefined {
    const hold = this.#list.find(
      (h) => h.seq === undefined && (h.match === undefined || fits(h.match, view)),
    );
    if (hold) hold.seq = seq;
    return hold;
  }

  /** End every hold (`reset()`, `dispose()`). */
  endAll(why: string): void {
    for (const hold of this.#list) hold.end(why);
    this.#list = [];
  }
}

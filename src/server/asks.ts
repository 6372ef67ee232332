import type { ServerContext } from './context.js';
import { loggedRequest } from './logged.js';
import { checkParams } from './playbook/actions.js';
import type { PlaybookFunction } from './playbook/encode.js';
import type { ToolResultRecord } from './playbook/wire.js';
import type { AskValue, ServerEvent } from './protocol.js';
import type { LoggedRequest, ResponseHandler } from './types.js';

type Ask = Extract<ServerEvent, { type: 'ask' }>;

/** Told when a run of a function begins and when it ends (a playbook counts its running `.then()`s). */
export interface Running {
  begin(): void;
  end(): void;
}

/**
 * The test thread's answers to the worker's questions (design §3 asks.ts):
 * predicates, function responses, the `unmatched` function and a
 * playbook's functions (`.then()`, late-bound params) are kept here by id
 * and run when asked — never inline while events are drained, always in a
 * later microtask, so a `requests()` that drains an ask returns first.
 */
export class Asks {
  readonly #ctx: ServerContext;
  readonly #predicates = new Map<number, (request: LoggedRequest) => boolean>();
  readonly #handlers = new Map<number, ResponseHandler>();
  readonly #playbookFunctions = new Map<number, { fn: PlaybookFunction; track?: Running }>();
  /** Questions received and not begun yet. */
  readonly #waiting = new Set<number>();
  /** Of those, the ones the worker stopped waiting for: not run. */
  readonly #dropped = new Set<number>();
  #next = 1;

  constructor(ctx: ServerContext) {
    this.#ctx = ctx;
  }

  addPredicate(fn: (request: LoggedRequest) => boolean): number {
    const id = this.#next++;
    this.#predicates.set(id, fn);
    return id;
  }

  addHandler(fn: ResponseHandler): number {
    const id = this.#next++;
    this.#handlers.set(id, fn);
    return id;
  }

  /** A `.then()` or params function; `track` hears when a run of it begins and ends. */
  addPlaybookFunction(fn: PlaybookFunction, track?: Running): number {
    const id = this.#next++;
    this.#playbookFunctions.set(id, track === undefined ? { fn } : { fn, track });
    return id;
  }

  /** reset(): the functions of the old script go. */
  clear(): void {
    this.#predicates.clear();
    this.#handlers.clear();
    this.#playbookFunctions.clear();
    this.#waiting.clear();
    this.#dropped.clear();
  }

  answer(event: Ask): void {
    this.#waiting.add(event.ask);
    queueMicrotask(() => void this.#answer(event));
  }

  /** The worker stopped waiting for question `ask` (its request got its error already). */
  drop(ask: number): void {
    if (this.#waiting.has(ask)) this.#dropped.add(ask);
  }

  async #answer(event: Ask): Promise<void> {
    // Apply what else the worker posted first: a drop of this question may be queued behind it.
    try {
      this.#ctx.sync(false);
    } catch {
      // a failed worker: the answer below goes nowhere
    }
    this.#waiting.delete(event.ask);
    if (this.#dropped.delete(event.ask)) return; // its request had its 500: running it now would act on a request that failed
    this.#said(event, 'began');
    const request = loggedRequest(event.request);
    const track =
      event.kind === 'then' ? this.#playbookFunctions.get(event.target)?.track : undefined;
    track?.begin();
    try {
      if (event.kind === 'predicate') {
        const fn = this.#predicates.get(event.target);
        if (!fn) throw new Error('the predicate is gone (reset()?)');
        const verdict: unknown = fn(request);
        this.#said(event, 'returned');
        if (typeof (verdict as Promise<unknown> | undefined)?.then === 'function') {
          throw new Error(
            'a predicate must return a boolean, not a promise (use a function response to wait)',
          );
        }
        this.#post(event, { ok: true, value: Boolean(verdict) });
        return;
      }
      if (event.kind === 'then' || event.kind === 'params') {
        const fn = this.#playbookFunctions.get(event.target)?.fn;
        if (!fn) throw new Error('the function is gone (reset()?)');
        if (event.kind === 'then') {
          const done = (fn as (result: ToolResultRecord) => unknown)(
            event.detail as ToolResultRecord,
          );
          this.#said(event, 'returned');
          await done;
          this.#post(event, { ok: true, value: true });
        } else {
          const made = (fn as () => unknown)();
          this.#said(event, 'returned');
          const params = checkParams(await made, event.label);
          this.#post(event, { ok: true, value: { params } });
        }
        return;
      }
      const fn = event.kind === 'unmatched' ? this.#unmatched() : this.#handlers.get(event.target);
      if (!fn) throw new Error('the function is gone (reset()?)');
      const made = fn(request);
      this.#said(event, 'returned');
      const value = await made;
      const where =
        event.kind === 'unmatched'
          ? 'the unmatched function of createMockServer()'
          : `the response function of ${event.label.startsWith('fifo#') ? event.label : `expectation '${event.label}'`}`;
      this.#post(event, { ok: true, value: this.#ctx.checkResponse(value, where) });
    } catch (error) {
      this.#post(event, {
        ok: false,
        error: error instanceof Error ? error.message : String(error),
      });
    } finally {
      track?.end();
    }
  }

  /** Tell the worker how far the function of `event` got (its timeout's text says which). */
  #said(event: Ask, stage: 'began' | 'returned'): void {
    if (!this.#ctx.disposed) this.#ctx.post({ type: 'asked', ask: event.ask, stage });
  }

  #unmatched(): ResponseHandler | undefined {
    const policy = this.#ctx.settings.unmatched;
    return typeof policy === 'function' ? policy : undefined;
  }

  #post(event: Ask, answer: { ok: true; value: AskValue } | { ok: false; error: string }): void {
    if (this.#ctx.disposed) return;
    this.#ctx.post(
      answer.ok
        ? { type: 'answer', ask: event.ask, ok: true, value: answer.value }
        : { type: 'answer', ask: event.ask, ok: false, error: answer.error },
    );
  }
}

import type { ServerContext } from './context.js';
import { loggedRequest } from './logged.js';
import { checkParams } from './playbook/actions.js';
import type { PlaybookFunction } from './playbook/encode.js';
import type { ToolResultRecord } from './playbook/wire.js';
import type { AskValue, ServerEvent } from './protocol.js';
import type { LoggedRequest, ResponseHandler } from './types.js';

type Ask = Extract<ServerEvent, { type: 'ask' }>;

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
  readonly #playbookFunctions = new Map<number, PlaybookFunction>();
  /** Questions the worker stopped waiting for before they began: not run. */
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

  addPlaybookFunction(fn: PlaybookFunction): number {
    const id = this.#next++;
    this.#playbookFunctions.set(id, fn);
    return id;
  }

  /** reset(): the functions of the old script go. */
  clear(): void {
    this.#predicates.clear();
    this.#handlers.clear();
    this.#playbookFunctions.clear();
    this.#dropped.clear();
  }

  answer(event: Ask): void {
    queueMicrotask(() => void this.#answer(event));
  }

  /** The worker stopped waiting for question `ask` (its request got its error already). */
  drop(ask: number): void {
    this.#dropped.add(ask);
  }

  async #answer(event: Ask): Promise<void> {
    if (this.#dropped.delete(event.ask)) return; // its timeout came first: running it now would act on a request that failed
    if (!this.#ctx.disposed) this.#ctx.post({ type: 'asked', ask: event.ask });
    const request = loggedRequest(event.request);
    try {
      if (event.kind === 'predicate') {
        const fn = this.#predicates.get(event.target);
        if (!fn) throw new Error('the predicate is gone (reset()?)');
        const verdict: unknown = fn(request);
        if (typeof (verdict as Promise<unknown> | undefined)?.then === 'function') {
          throw new Error(
            'a predicate must return a boolean, not a promise (use a function response to wait)',
          );
        }
        this.#post(event, { ok: true, value: Boolean(verdict) });
        return;
      }
      if (event.kind === 'then' || event.kind === 'params') {
        const fn = this.#playbookFunctions.get(event.target);
        if (!fn) throw new Error('the function is gone (reset()?)');
        if (event.kind === 'then') {
          await (fn as (result: ToolResultRecord) => unknown)(event.detail as ToolResultRecord);
          this.#post(event, { ok: true, value: true });
        } else {
          const params = checkParams(await (fn as () => unknown)(), event.label);
          this.#post(event, { ok: true, value: { params } });
        }
        return;
      }
      const fn = event.kind === 'unmatched' ? this.#unmatched() : this.#handlers.get(event.target);
      if (!fn) throw new Error('the function is gone (reset()?)');
      const value = await fn(request);
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
    }
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

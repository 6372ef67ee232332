import type { AskKind, AskValue, WireEntry } from '../protocol.js';
import type { EntryLog } from './log.js';

/** How a question to the test's thread ended. */
export type AskOutcome =
  | { kind: 'answer'; value: AskValue }
  | { kind: 'error'; error: string }
  /** `reached`: how far the test's thread got with the function (none: it never began it). */
  | { kind: 'timeout'; ms: number; reached: Reached }
  /** reset() or dispose() came first. */
  | { kind: 'cancelled' };

interface Pending {
  resolve(outcome: AskOutcome): void;
  timer: NodeJS.Timeout;
  gen: number;
  /** How far the test's thread said it got. */
  reached: Reached;
}

/** How far the test's thread got with a function before its question timed out. */
export type Reached = 'none' | 'began' | 'returned';

/**
 * Questions to the test's thread (design §4): a predicate's verdict, a
 * function response's content, the `unmatched` function's response, a
 * playbook's `.then()` and late-bound params. Each waits at most
 * `timeoutMs`: that thread may be blocked in `execFileSync`, and then no
 * answer can come (HT-04); the caller turns a timeout into a 500 whose
 * text says so (`waitedFor`).
 */
export class Asker {
  readonly #log: EntryLog;
  readonly #timeoutMs: number;
  readonly #pending = new Map<number, Pending>();
  #next = 1;

  constructor(log: EntryLog, timeoutMs: number) {
    this.#log = log;
    this.#timeoutMs = timeoutMs;
  }

  ask(
    gen: number,
    kind: AskKind,
    target: number,
    label: string,
    request: WireEntry,
    detail?: unknown,
  ): Promise<AskOutcome> {
    const ask = this.#next++;
    return new Promise<AskOutcome>((resolve) => {
      const ms = this.#timeoutMs;
      const timer = setTimeout(() => {
        const reached = this.#pending.get(ask)?.reached ?? 'none';
        this.#pending.delete(ask);
        // A question not begun yet is dropped: its answer could only come after the request gave up.
        this.#log.post({ type: 'ask-dropped', gen, ask });
        resolve({ kind: 'timeout', ms, reached });
      }, ms);
      this.#pending.set(ask, { resolve, timer, gen, reached: 'none' });
      this.#log.post(
        detail === undefined
          ? { type: 'ask', gen, ask, kind, target, label, request }
          : { type: 'ask', gen, ask, kind, target, label, request, detail },
      );
    });
  }

  /** The test's thread got this far with the function of question `ask`. */
  progress(ask: number, stage: 'began' | 'returned'): void {
    const pending = this.#pending.get(ask);
    if (pending) pending.reached = stage;
  }

  /** The test's thread answered (a late answer, after the timeout, is dropped). */
  answer(ask: number, outcome: AskOutcome): void {
    const pending = this.#pending.get(ask);
    if (!pending) return;
    this.#pending.delete(ask);
    clearTimeout(pending.timer);
    pending.resolve(outcome);
  }

  /** End the questions of generations before `gen` (all of them when undefined). */
  cancel(gen?: number): void {
    for (const [ask, pending] of this.#pending) {
      if (gen !== undefined && pending.gen >= gen) continue;
      this.answer(ask, { kind: 'cancelled' });
    }
  }
}

/**
 * The text of a request that waited in vain for the test's thread:
 * "shimkit: the response function of expectation 'plan' for POST /v1/x
 * (request #3) did not answer within 30000 ms. …" — a thread that never
 * began the function is blocked; a function that began and did not return
 * blocks the thread itself; one that returned gave a promise that did not
 * settle.
 */
export function waitedFor(
  what: string,
  request: string,
  ms: number,
  reached: Reached = 'none',
): string {
  if (reached === 'returned') {
    return `shimkit: ${what} for ${request} did not answer within ${ms} ms. It ran on the test's thread, and the promise it returned did not settle in that time: does it wait for something that never comes? Raise timeoutMs of createMockServer() if it needs longer.`;
  }
  if (reached === 'began') {
    return `shimkit: ${what} for ${request} did not answer within ${ms} ms. It began on the test's thread and had not returned: it blocks that thread itself (a busy loop, or a synchronous wait such as execFileSync inside it). Make it return, or run what it waits for asynchronously.`;
  }
  return `shimkit: ${what} for ${request} did not answer within ${ms} ms. It runs on the test's thread: if that thread is blocked in execFileSync/spawnSync, run the program with spawn (or shimkit's run()) and await it; or raise timeoutMs of createMockServer().`;
}

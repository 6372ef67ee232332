import type { WireAnswer, WireEntry, WireRequestMatch } from '../protocol.js';
import type { WireHttpResponse } from '../types.js';
import { type Asker, waitedFor } from './ask.js';
import { fits, type RequestView } from './fit.js';
import { type Take, WorkerPlaybook } from './playbook/engine.js';

/**
 * The claim (design §4 "Exactly once"): the first fitting expectation or
 * playbook in the order they were made, then the FIFO, then the
 * `unmatched` policy. A claim is one synchronous turn — control drained,
 * fit checked, use counted (a playbook's step taken) — so no response is
 * ever taken twice. Requests queue in arrival order; the queue only waits
 * when a request's static parts fit an entry with a predicate, whose
 * verdict the test's thread gives.
 */

export interface ScriptExpect {
  kind: 'expect';
  id: number;
  name: string;
  match: WireRequestMatch;
  answer: WireAnswer;
  times: number;
  used: number;
}

export interface ScriptFifo {
  /** 1-based, as `fifo#<n>` names it. */
  index: number;
  answer: WireAnswer;
  times: number;
  used: number;
}

/** A playbook (SPEC PB), among the expectations: it takes model requests that fit `match` until it is done. */
export interface ScriptPlaybook {
  kind: 'playbook';
  id: number;
  name: string;
  match: WireRequestMatch;
  playbook: WorkerPlaybook;
}

export type ScriptEntry = ScriptExpect | ScriptPlaybook;

/** The expectations, playbooks and FIFO of the current generation. */
export class Script {
  gen = 1;
  /** The methods the FIFO answers (the fifoMethods option); undefined: any. */
  readonly fifoMethods: ReadonlySet<string> | undefined;
  /** Upper case, for messages: `GET, POST, PUT, PATCH and DELETE`. */
  readonly fifoMethodsText: string;
  /**
   * The last scripted answer an SDK retries (408, 409, 429, 5xx without
   * `x-should-retry: false`), until a scripted answer of another status to
   * the same method and path: an unmatched request to them is likely its
   * retry (unmatched.ts says so).
   */
  retried: { seq: number; method: string; path: string; status: number; by: string } | undefined;
  /** Expectations and playbooks, in the order they were made. */
  entries: ScriptEntry[] = [];
  fifo: ScriptFifo[] = [];
  #fifoHead = 0;
  #seq = 0;

  constructor(fifoMethods?: readonly string[]) {
    this.fifoMethods = fifoMethods === undefined ? undefined : new Set(fifoMethods);
    this.fifoMethodsText =
      fifoMethods === undefined
        ? 'any method'
        : fifoMethods.length === 1
          ? (fifoMethods[0] as string)
          : `${fifoMethods.slice(0, -1).join(', ')} and ${fifoMethods.at(-1)}`;
  }

  nextSeq(): number {
    return ++this.#seq;
  }

  /** The FIFO entry the next FIFO claim takes, if any is left. */
  fifoHead(): ScriptFifo | undefined {
    while (this.#fifoHead < this.fifo.length) {
      const entry = this.fifo[this.#fifoHead] as ScriptFifo;
      if (entry.used < entry.times) return entry;
      this.#fifoHead++;
    }
    return undefined;
  }

  /**
   * A `retryable` response whose client left before its last byte: its use
   * is given back — to the expectation's remaining times, or to its place
   * in the FIFO (the FIFO's head moves back to it) — so the client's retry
   * takes it. Nothing when `reset()` came since (`gen`). Whether it was.
   */
  giveBack(claim: ClaimResult, gen: number): boolean {
    if (gen !== this.gen) return false;
    if (claim.kind === 'expect') {
      const e = this.entries.find((entry) => entry.kind === 'expect' && entry.id === claim.id);
      if (e?.kind !== 'expect' || e.used === 0) return false;
      e.used--;
      return true;
    }
    if (claim.kind !== 'fifo') return false;
    const at = claim.index - 1;
    const f = this.fifo[at];
    if (f === undefined || f.used === 0) return false;
    f.used--;
    if (this.#fifoHead > at) this.#fifoHead = at;
    return true;
  }

  /** A scripted answer to `view` is being served: keep the last one an SDK would retry (see `retried`). */
  answered(view: RequestView, seq: number, wire: WireHttpResponse, by: string): void {
    const status = wire.status;
    if (status === 408 || status === 409 || status === 429 || status >= 500) {
      if (wire.kind === 'wire') return;
      for (const [name, value] of wire.headers) {
        if (name === 'x-should-retry' && value.trim() === 'false') return;
      }
      this.retried = { seq, method: view.method, path: view.path, status, by };
      return;
    }
    const last = this.retried;
    if (last !== undefined && last.method === view.method && last.path === view.path)
      this.retried = undefined;
  }

  reset(gen: number): void {
    this.gen = gen;
    this.retried = undefined;
    this.entries = [];
    this.fifo = [];
    this.#fifoHead = 0;
    this.#seq = 0;
  }
}

export type ClaimResult =
  | { kind: 'expect'; id: number; name: string; answer: WireAnswer }
  | { kind: 'fifo'; index: number; answer: WireAnswer }
  /** A playbook took it: an action to answer with, or a refusal that took nothing. */
  | { kind: 'playbook'; entry: ScriptPlaybook; take: Take }
  /** `exhausted`: the first playbook it fitted, done (PB-05 "Playbook exhausted"). */
  | { kind: 'unmatched'; exhausted?: ScriptPlaybook }
  /** A predicate threw or did not answer: the request fails with `error`. */
  | { kind: 'failed'; error: string };

/** A request whose body is in, waiting for its claim. */
export interface PendingClaim {
  gen: number;
  seq: number;
  view: RequestView;
  /** `POST /v1/x (request #3)`, for messages. */
  label(): string;
  /** The request as a predicate sees it. */
  entry(): WireEntry;
  /** Predicate verdicts so far, by script entry (a string: why it failed). */
  verdicts: Map<ScriptEntry, boolean | string>;
  done(result: ClaimResult, gen: number): void;
}

export class Claims {
  readonly #script: Script;
  readonly #asker: Asker;
  readonly #drain: () => void;
  readonly #queue: PendingClaim[] = [];
  #waiting = false;

  constructor(script: Script, asker: Asker, drain: () => void) {
    this.#script = script;
    this.#asker = asker;
    this.#drain = drain;
  }

  submit(pending: PendingClaim): void {
    this.#queue.push(pending);
    if (!this.#waiting) this.#pump();
  }

  #pump(): void {
    while (this.#queue.length > 0 && !this.#waiting) {
      this.#drain();
      const head = this.#queue[0] as PendingClaim;
      const script = this.#script;
      if (head.gen !== script.gen) {
        // reset() came between its arrival and its claim: it belongs to the new script.
        head.gen = script.gen;
        head.seq = script.nextSeq();
        head.verdicts.clear();
      }
      let result: ClaimResult | undefined;
      try {
        result = this.#try(head);
      } catch (error) {
        // Never leave a request at the head: it would stop every claim after it.
        const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
        result = {
          kind: 'failed',
          error: `shimkit: an internal error while claiming ${head.label()} (a bug in shimkit; please report it): ${text}`,
        };
      }
      if (result === undefined) return;
      this.#queue.shift();
      head.done(result, script.gen);
    }
  }

  #try(head: PendingClaim): ClaimResult | undefined {
    const script = this.#script;
    let exhausted: ScriptPlaybook | undefined;
    for (const e of script.entries) {
      if (e.kind === 'expect' ? e.used >= e.times : !WorkerPlaybook.takes(head.view)) continue;
      if (!fits(e.match, head.view)) continue;
      // A done playbook takes only a retry of its last request; else, like a used-up expectation, it asks no predicate.
      if (e.kind === 'playbook' && e.playbook.done && !e.playbook.isRetry(head.view)) {
        exhausted ??= e;
        continue;
      }
      if (e.match.predicate !== undefined) {
        const verdict = head.verdicts.get(e);
        if (verdict === undefined) {
          this.#askPredicate(head, e);
          return undefined;
        }
        if (typeof verdict === 'string') return { kind: 'failed', error: verdict };
        if (!verdict) continue;
      }
      if (e.kind === 'playbook') {
        return {
          kind: 'playbook',
          entry: e,
          take: e.playbook.take(head.view, head.seq, head.label()),
        };
      }
      e.used++;
      return { kind: 'expect', id: e.id, name: e.name, answer: e.answer };
    }
    const methods = script.fifoMethods;
    const fifo =
      methods === undefined || methods.has(head.view.method) ? script.fifoHead() : undefined;
    if (fifo) {
      fifo.used++;
      return { kind: 'fifo', index: fifo.index, answer: fifo.answer };
    }
    return exhausted ? { kind: 'unmatched', exhausted } : { kind: 'unmatched' };
  }

  #askPredicate(head: PendingClaim, e: ScriptEntry): void {
    this.#waiting = true;
    const what = `the predicate of ${e.kind === 'expect' ? 'expectation' : 'playbook'} '${e.name}'`;
    const gen = this.#script.gen;
    void this.#asker
      .ask(gen, 'predicate', e.match.predicate as number, e.name, head.entry())
      .then((outcome) => {
        if (head.gen === gen) {
          if (outcome.kind === 'answer') head.verdicts.set(e, outcome.value === true);
          else if (outcome.kind === 'error') {
            head.verdicts.set(e, `shimkit: ${what} threw for ${head.label()}: ${outcome.error}`);
          } else if (outcome.kind === 'timeout') {
            head.verdicts.set(e, waitedFor(what, head.label(), outcome.ms, outcome.reached));
          }
        }
        this.#waiting = false;
        this.#pump();
      });
  }

  /** dispose(): requests still waiting for a claim are dropped (their sockets are closed). */
  clear(): void {
    this.#queue.length = 0;
  }
}

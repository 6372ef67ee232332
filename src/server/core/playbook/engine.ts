import { describeCalls } from '../../playbook/describe.js';
import type {
  PlaybookNews,
  ToolCallRecord,
  ToolResultRecord,
  WireAction,
  WirePlaybook,
} from '../../playbook/wire.js';
import type { AskKind } from '../../protocol.js';
import type { WireHttpResponse } from '../../types.js';
import type { AskOutcome } from '../ask.js';
import { waitedFor } from '../ask.js';
import { jsonOf, NOT_JSON, type RequestView } from '../fit.js';
import {
  type Conversation,
  type ModelFormat,
  modelFormatOf,
  readConversation,
  type ToolResultIn,
} from '../model/conversation.js';
import { type ModelAnswer, modelWire, toolCallId } from '../model/reply.js';
import {
  endedWithCalls,
  exhaustedText,
  promptMismatch,
  refusedText,
  resultsMismatch,
  type SentCall,
} from './texts.js';

/** What the model answers to one request, once the test's functions gave what they give. */
interface Answered {
  action: WireAction;
  answer: ModelAnswer;
}

/** What the engine needs of an exchange that carries one of its answers. */
export interface AnswerExchange {
  /** The last byte of the response was written, with the rest. */
  readonly wholeWritten: boolean;
  /** A hold's release() replaced the answer (it never went out as made). */
  readonly replaced: boolean;
  /** The response is over (its connection closed, or it ended). */
  readonly closed: boolean;
}

/** The request that took the last step, and every exchange that carried its answer (its retries'). */
interface LastTaken {
  seq: number;
  body: Buffer;
  answered: Promise<Answered>;
  exchanges: AnswerExchange[];
}

/** What taking a request gave: an action to answer with, or a refusal (nothing taken). */
export type Take =
  | {
      kind: 'answer';
      action: WireAction;
      format: ModelFormat;
      conversation: Conversation;
      /** The `.then()`s to run first, each with its call's result. */
      thens: Array<{ fns: number[]; record: ToolResultRecord; call: SentCall }>;
      /** Its calls were recorded when it was taken (their params are data). */
      recorded: boolean;
    }
  /** The same request again (an SDK's retry): the answer it got, again; nothing taken. */
  | { kind: 'retry'; of: number; format: ModelFormat; conversation: Conversation }
  | { kind: 'refused'; text: string };

/** How the engine asks the test's thread (the server's Asker, bound to the request). */
export type Ask = (
  kind: AskKind,
  target: number,
  label: string,
  detail?: unknown,
) => Promise<AskOutcome>;

/** A `.then()` or params function that failed: its text ends the request (a 500) and the playbook. */
export class PlaybookFailure extends Error {}

/**
 * A playbook in the worker (SPEC PB): which action comes next, the calls
 * of the answer before (each later request of a turn must answer them),
 * and the work of answering. `take()` is synchronous, inside the claim: it
 * checks the turn's rule and takes the step, so no action is answered
 * twice. `answer()` then runs the test's functions (`.then()`s, late-bound
 * params) in order, one request after another, and builds the answer in
 * the request's format. Each piece of news is posted before the bytes it
 * describes.
 */
export class WorkerPlaybook {
  readonly wire: WirePlaybook;
  /** Posts a batch of news (the entry of the request that took a step carries that step's). */
  readonly #send: (news: PlaybookNews[]) => void;
  /** News not sent yet. */
  #outbox: PlaybookNews[] = [];
  #next = 0;
  #sent: SentCall[] = [];
  #last: { step: number; turn: number; describe: string } | undefined;
  /** The request that took the last step: its body (a retry sends the same bytes) and its answer. */
  #lastTaken: LastTaken | undefined;
  /** Why it answers no more (a function of the test failed). */
  #broken: string | undefined;
  #chain: Promise<unknown> = Promise.resolve();
  /** Answers waiting for the test's thread (or behind one that does). */
  #waiting = 0;
  /**
   * The next step's answer, made while the agent works on the last one:
   * for the same request facts (format, stream, model, usage) and data
   * params, its bytes are ready when its request comes.
   */
  #ready: { step: number; facts: string; wire: WireHttpResponse } | undefined;

  constructor(wire: WirePlaybook, send: (news: PlaybookNews[]) => void) {
    this.wire = wire;
    this.#send = send;
  }

  /**
   * The news taken so far, for the entry of the request that took it (one
   * message for both). Call right after `take()`.
   */
  news(): PlaybookNews[] {
    const news = this.#outbox;
    this.#outbox = [];
    return news;
  }

  /** Whether every action was taken. */
  get done(): boolean {
    return this.#next >= this.wire.actions.length;
  }

  /**
   * Whether `view` is the request that took the last step, sent again
   * after it ended without its answer: an SDK retries a request whose
   * answer it did not get (a client timeout, a reset), with the same body,
   * after it gave up on the first. It gets the same answer; nothing is
   * taken. The same body while the first is still being answered is
   * another client (not a retry), and after the answer went out whole it is
   * a new conversation that starts alike: either takes the next step.
   */
  isRetry(view: RequestView): boolean {
    const last = this.#lastTaken;
    if (last === undefined || !last.body.equals(view.body)) return false;
    const { exchanges } = last;
    return (
      exchanges.every((x) => x.closed) && !exchanges.some((x) => x.wholeWritten && !x.replaced)
    );
  }

  /** Whether `view` is a model request (the playbook's match aside). */
  static takes(view: RequestView): boolean {
    return modelFormatOf(view.method, view.path) !== undefined;
  }

  /** Take the next action for this request, or refuse it (PB-02); call only when not `done` or for a retry. */
  take(view: RequestView, seq: number, label: string): Take {
    const format = modelFormatOf(view.method, view.path) as ModelFormat;
    const body = jsonOf(view);
    const read =
      body === NOT_JSON
        ? { problem: `the body is not JSON (${view.body.length} bytes)` }
        : readConversation(format, body);
    const action = this.wire.actions[
      Math.min(this.#next, this.wire.actions.length - 1)
    ] as WireAction;
    if ('problem' in read) {
      return this.#refuse(
        seq,
        label,
        action,
        `expected a model request, but ${read.problem}`,
        '(none)',
      );
    }
    const retried = this.#lastTaken;
    if (retried !== undefined && this.isRetry(view)) {
      return { kind: 'retry', of: retried.seq, format, conversation: read };
    }
    if (this.#broken !== undefined) {
      return this.#refuse(
        seq,
        label,
        action,
        `is not answered: the playbook stopped — ${this.#broken}`,
        read.last,
      );
    }
    const results = new Map<string, ToolResultIn>();
    const twice = new Set<string>();
    for (const r of read.results) {
      if (results.has(r.toolCallId)) twice.add(r.toolCallId);
      results.set(r.toolCallId, r);
    }
    const sent = new Map(this.#sent.map((c) => [c.toolCallId, c]));
    const doubled = [...twice].filter((id) => sent.has(id));
    if (doubled.length > 0) {
      const why = `expected one tool result for each call of the answer before, and it carries ${doubled.map((id) => `${id} (${sent.get(id)?.toolName})`).join(', ')} more than once (the model APIs refuse such a request)`;
      return this.#refuse(seq, label, action, why, read.last);
    }
    if (action.first) {
      const why = promptMismatch(this.wire.prompts[action.turn - 1] ?? '', read.prompt);
      if (why !== undefined) {
        const answered =
          this.#sent.length > 0 && this.#sent.every((c) => results.has(c.toolCallId));
        const ended = answered ? endedWithCalls(this.wire.actions[this.#next - 1]) : undefined;
        return this.#refuse(seq, label, action, ended ?? why, read.last);
      }
    } else {
      const missing = this.#sent.filter((c) => !results.has(c.toolCallId));
      if (missing.length > 0) {
        const why = resultsMismatch(this.#sent, missing, [...results.keys()]);
        return this.#refuse(seq, label, action, why, read.last);
      }
    }
    const records: ToolResultRecord[] = [];
    const thens: Array<{ fns: number[]; record: ToolResultRecord; call: SentCall }> = [];
    // In the order the request carries them.
    for (const result of results.values()) {
      const call = sent.get(result.toolCallId);
      if (!call) continue;
      const record: ToolResultRecord = {
        step: call.step,
        turn: call.turn,
        toolName: call.toolName,
        toolCallId: call.toolCallId,
        text: result.text,
        content: result.content,
        isError: result.isError,
        seq,
      };
      records.push(record);
      if (call.thens.length > 0) thens.push({ fns: call.thens, record, call });
    }
    if (records.length > 0) this.#postResults(records);
    if (action.first) {
      this.#post({ kind: 'turn', record: { turn: action.turn, prompt: read.prompt ?? '', seq } });
    }
    this.#post({ kind: 'step', step: action.step, seq });
    this.#next++;
    const key = this.#key(action);
    this.#sent = (action.calls ?? []).map((call, k) => ({
      toolCallId: toolCallId(format, key, k + 1),
      toolName: call.tool,
      step: action.step,
      turn: action.turn,
      thens: call.thens,
    }));
    // Calls whose params are data are news now, with the entry; late-bound ones once made.
    const recorded = (action.calls ?? []).every((c) => c.params === undefined);
    if (action.kind === 'calls' && recorded) this.#postCalls(action, format, seq, sentOf(action));
    return { kind: 'answer', action, format, conversation: read, thens, recorded };
  }

  /**
   * The answer to a taken request, at once when nothing needs the test's
   * thread (no `.then()` to run first, params given as data, no earlier
   * answer still waiting for that thread): the hot path of a data-only
   * playbook, as short as a scripted response's. Undefined when it must
   * wait: then `answer()`.
   */
  answerNow(
    take: Extract<Take, { kind: 'answer' }>,
    seq: number,
    body: Buffer,
    exchange: AnswerExchange,
  ): WireHttpResponse | undefined {
    const { action } = take;
    if (this.#waiting > 0 || take.thens.length > 0) return undefined;
    if ((action.calls ?? []).some((c) => c.params !== undefined)) return undefined;
    const answered = this.#made(take, seq, sentOf(action));
    this.#lastTaken = { seq, body, answered: Promise.resolve(answered), exchanges: [exchange] };
    return this.#wire(take, answered);
  }

  /**
   * The answer to a taken request: its `.then()`s run, its late-bound
   * params resolved (in order, after every earlier request's), its calls
   * recorded, then the answer in the request's format. A retry gets the
   * answer of the request it repeats, in its own format, when that answer
   * is made. `exchange` tells whether the answer reached the client whole
   * (what makes a repeat of the request a retry, or not). Throws a
   * PlaybookFailure when a function of the test failed (after which the
   * playbook refuses every request, saying why).
   */
  async answer(
    take: Extract<Take, { kind: 'answer' | 'retry' }>,
    ask: Ask,
    seq: number,
    label: string,
    body: Buffer,
    exchange: AnswerExchange,
  ): Promise<WireHttpResponse> {
    let answered: Promise<Answered>;
    if (take.kind === 'retry') {
      const last = this.#lastTaken as LastTaken;
      last.exchanges.push(exchange);
      answered = last.answered;
    } else {
      this.#waiting++;
      answered = this.#chain
        .then(() => this.#answer(take, ask, seq, label))
        .finally(() => this.#waiting--);
      this.#chain = answered.catch(() => {});
      this.#lastTaken = { seq, body, answered, exchanges: [exchange] };
    }
    return this.#wire(take, await answered);
  }

  /** The bytes of an answer for this request (made ahead when they could be), and the next step's made ahead. */
  #wire(take: Extract<Take, { kind: 'answer' | 'retry' }>, answered: Answered): WireHttpResponse {
    const { action, answer } = answered;
    const { format, conversation } = take;
    const request = { model: conversation.model, includeUsage: conversation.includeUsage };
    const facts = `${format}\0${conversation.stream}\0${request.includeUsage}\0${request.model ?? ''}`;
    const ready = this.#ready;
    this.#ready = undefined;
    const wire =
      ready !== undefined && ready.step === action.step && ready.facts === facts
        ? ready.wire
        : modelWire(format, conversation.stream, answer, request);
    if (take.kind === 'answer') {
      setImmediate(() => this.#prepare(action.step + 1, facts, take));
    }
    return wire;
  }

  /** Make step `step`'s answer ahead, for requests like `like`, when its params are data. */
  #prepare(step: number, facts: string, like: Extract<Take, { kind: 'answer' }>): void {
    const action = this.wire.actions[step - 1];
    if (action === undefined || (action.calls ?? []).some((c) => c.params !== undefined)) return;
    const key = this.#key(action);
    const answer: ModelAnswer =
      action.kind === 'says'
        ? { key, text: action.text ?? '', calls: [] }
        : { key, calls: sentOf(action) };
    const { conversation } = like;
    const request = { model: conversation.model, includeUsage: conversation.includeUsage };
    this.#ready = {
      step,
      facts,
      wire: modelWire(like.format, conversation.stream, answer, request),
    };
  }

  async #answer(
    take: Extract<Take, { kind: 'answer' }>,
    ask: Ask,
    seq: number,
    label: string,
  ): Promise<Answered> {
    const { action } = take;
    for (const { fns, record, call } of take.thens) {
      for (const fn of fns) {
        const what = `the .then() of calls(${JSON.stringify(call.toolName)}) at step ${call.step} of playbook '${this.wire.name}'`;
        await this.#ask(ask, 'then', fn, what, label, record);
      }
    }
    const sent = sentOf(action);
    for (const [k, call] of (action.calls ?? []).entries()) {
      if (call.params === undefined) continue;
      const what = `the params function of calls(${JSON.stringify(call.tool)}) at step ${action.step} of playbook '${this.wire.name}'`;
      const value = await this.#ask(ask, 'params', call.params, what, label);
      (sent[k] as SentArgs).arguments = JSON.stringify(
        (value as { params: Record<string, unknown> }).params,
      );
    }
    return this.#made(take, seq, sent);
  }

  /** The answer of a taken step once its calls' params are known: recorded, and sent news. */
  #made(take: Extract<Take, { kind: 'answer' }>, seq: number, sent: SentArgs[]): Answered {
    const { action, format } = take;
    const key = this.#key(action);
    // Params given as data are in the action's own description; late-bound ones are now known.
    const describe =
      action.kind === 'calls' && !take.recorded
        ? describeCalls(
            sent.map((c) => ({ tool: c.name, params: c.arguments })),
            sent.length > 1,
          )
        : action.describe;
    if (action.kind === 'calls' && !take.recorded) this.#postCalls(action, format, seq, sent);
    this.#last = { step: action.step, turn: action.turn, describe };
    this.#flush();
    const answer: ModelAnswer =
      action.kind === 'says' ? { key, text: action.text ?? '', calls: [] } : { key, calls: sent };
    return { action, answer };
  }

  async #ask(
    ask: Ask,
    kind: AskKind,
    target: number,
    what: string,
    label: string,
    detail?: unknown,
  ): Promise<unknown> {
    this.#flush(); // what the test's function may read (toolResults()) is there before it runs
    const outcome = await ask(kind, target, what, detail);
    if (outcome.kind === 'answer') return outcome.value;
    const text =
      outcome.kind === 'timeout'
        ? waitedFor(what, label, outcome.ms, outcome.reached)
        : outcome.kind === 'error'
          ? `shimkit: ${what} failed for ${label}: ${outcome.error}`
          : `shimkit: ${what} for ${label} was ended by reset() or dispose().`;
    this.#broken ??= text;
    throw new PlaybookFailure(text);
  }

  /** The text of a request after the last action that nothing else took (PB-05). */
  exhausted(view: RequestView, label: string): string {
    const format = modelFormatOf(view.method, view.path);
    const body = jsonOf(view);
    const read =
      format === undefined || body === NOT_JSON ? undefined : readConversation(format, body);
    const last =
      read === undefined || 'problem' in read ? '(not a model request it can read)' : read.last;
    return exhaustedText(this.wire.name, this.wire.actions.length, this.#last, label, last);
  }

  /** A function failed, or a request found it exhausted: the text is news for assertDone(). */
  failed(text: string, seq: number): void {
    this.#post({ kind: 'failure', text, seq });
    this.#flush();
  }

  /** The calls of `action` as sent: a record each, and the description with their params. */
  #postCalls(action: WireAction, format: ModelFormat, seq: number, sent: SentArgs[]): void {
    const key = this.#key(action);
    const data = (action.calls ?? []).every((c) => c.params === undefined);
    const calls: ToolCallRecord[] = sent.map((call, k) => ({
      step: action.step,
      turn: action.turn,
      toolName: call.name,
      toolCallId: toolCallId(format, key, k + 1),
      params: JSON.parse(call.arguments) as Record<string, unknown>,
      seq,
    }));
    const describe = data
      ? action.describe
      : describeCalls(
          sent.map((c) => ({ tool: c.name, params: c.arguments })),
          sent.length > 1,
        );
    this.#post({ kind: 'calls', step: action.step, calls, describe });
  }

  #post(news: PlaybookNews): void {
    this.#outbox.push(news);
  }

  /** Send what is waiting, in one message. */
  #flush(): void {
    if (this.#outbox.length === 0) return;
    const news = this.#outbox;
    this.#outbox = [];
    this.#send(news);
  }

  /**
   * Post the results received. A content nested deeper than MAX_DEPTH is
   * replaced by a note (in the records the `.then()`s get too): the test's
   * thread could not take it apart (structured clone, JSON, its copies)
   * without running out of stack, and no tool result is shaped so.
   */
  #postResults(records: ToolResultRecord[]): void {
    for (const record of records) {
      if (deeperThan(record.content, MAX_DEPTH)) {
        record.content = `shimkit: this content is nested deeper than ${MAX_DEPTH} levels, too deep to pass to the test's thread; its text is in \`text\`.`;
      }
    }
    this.#post({ kind: 'results', records });
  }

  #refuse(seq: number, label: string, action: WireAction, why: string, last: string): Take {
    const text = refusedText(this.wire.name, label, action, why, last);
    this.#post({ kind: 'failure', text, seq });
    return { kind: 'refused', text };
  }

  /** `p1_s3`: playbook 1, step 3 — the ids of its answer. */
  #key(action: WireAction): string {
    return `p${this.wire.id}_s${action.step}`;
  }
}

/** How deep a tool result's content may be nested to be recorded as sent. */
const MAX_DEPTH = 256;

/** Whether `value` has arrays or objects nested more than `limit` deep (without recursion). */
function deeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop() as [unknown, number];
    if (typeof item !== 'object' || item === null) continue;
    if (depth >= limit) return true;
    for (const inner of Array.isArray(item) ? item : Object.values(item)) {
      if (typeof inner === 'object' && inner !== null) stack.push([inner, depth + 1]);
    }
  }
  return false;
}

/** A call as the answer sends it: its tool, and its arguments' JSON text. */
interface SentArgs {
  name: string;
  arguments: string;
}

/** The calls of `action` with the params given as data; late-bound ones `{}` until made. */
function sentOf(action: WireAction): SentArgs[] {
  return (action.calls ?? []).map((call) => ({
    name: call.tool,
    arguments: call.arguments ?? '{}',
  }));
}

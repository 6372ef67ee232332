import { describeValue } from '../../internal/describe.js';
import { InvalidOptionError } from '../../internal/errors.js';
import type { AnyValue } from '../types.js';
import type { ToolResultRecord } from './wire.js';

/**
 * The playbook DSL (SPEC PB, the seed harness's words): `when(prompt,
 * [calls(tool, params), says(text)])` scripts what the model decides, one
 * action per model request. Actions are plain values made for `when()`'s
 * list, checked when they are made.
 */

/** A tool's params: a JSON object, sent as the call's arguments. */
export type ToolParams = Record<string, unknown>;

/** Params given late: run on the test's thread when the request that gets the call arrives, after every earlier `.then()`. */
export type LateParams = () => ToolParams | Promise<ToolParams>;

/** Runs on the test's thread with the call's tool result, before the next action is answered. */
export type ThenCallback = (result: ToolResultRecord) => unknown;

/** What a turn's first request must carry as its last user text: a string (equal after trimming), a RegExp, or any(). */
export type PromptMatch = string | RegExp | AnyValue;

/**
 * The model calls a tool: one answer with one tool call. Made by
 * {@link calls}. Not a promise: its `then()` adds a callback for the call's
 * tool result, and an `await` of it is refused.
 */
export class CallsAction {
  readonly kind = 'calls' as const;
  /** The tool's name. */
  readonly tool: string;
  /** The params, or the function that gives them when the call is answered. */
  readonly params: ToolParams | LateParams;
  /** The `.then()` callbacks, in order. */
  readonly thens: readonly ThenCallback[];

  /** @internal Made by `calls()` and `then()`. */
  constructor(tool: string, params: ToolParams | LateParams, thens: readonly ThenCallback[]) {
    this.tool = tool;
    this.params = params;
    this.thens = thens;
    Object.freeze(this);
  }

  /**
   * The same call, with `fn` run on the test's thread with the call's tool
   * result (`{ text, content, isError, … }`) when the request that carries
   * it arrives, before the next action is answered (awaited when it returns
   * a promise, within the server's `timeoutMs`). An action is not a promise:
   * do not `await` it.
   * @example calls('read', { path: 'README.md' }).then((r) => { readme = r.text; })
   */
  // biome-ignore lint/suspicious/noThenProperty: the seed harness's word for it; an await of it is refused below
  then(fn: ThenCallback, ...rest: unknown[]): CallsAction {
    if (rest.length > 0) {
      throw new InvalidOptionError(
        `calls(${JSON.stringify(this.tool)}) is an action for when()'s list, not a promise: do not await it (nor return it from an async function). Its .then(fn) takes one callback, run with the call's tool result.`,
      );
    }
    if (typeof fn !== 'function') {
      throw new InvalidOptionError(
        `Expected the argument of calls(${JSON.stringify(this.tool)}).then() to be a function (result) => …, run with the call's tool result, got ${describeValue(fn)}.`,
      );
    }
    return new CallsAction(this.tool, this.params, [...this.thens, fn]);
  }
}

/** The model emits text: one answer that ends the turn. Made by {@link says}. */
export class SaysAction {
  readonly kind = 'says' as const;
  readonly text: string;

  /** @internal Made by `says()`. */
  constructor(text: string) {
    this.text = text;
    Object.freeze(this);
  }
}

/** The model calls several tools in one answer. Made by {@link parallel}. */
export class ParallelAction {
  readonly kind = 'parallel' as const;
  readonly calls: readonly CallsAction[];

  /** @internal Made by `parallel()`. */
  constructor(list: readonly CallsAction[]) {
    this.calls = Object.freeze([...list]);
    Object.freeze(this);
  }
}

/** One action of a turn: one model answer. */
export type PlaybookAction = CallsAction | SaysAction | ParallelAction;

/** A turn: the prompt the agent sends, and what the model does, answer by answer. Made by {@link when}. */
export interface Turn {
  readonly prompt: PromptMatch;
  readonly actions: readonly PlaybookAction[];
}

/**
 * A turn of a playbook: the agent sends `prompt` (its last user text,
 * checked on the turn's first request), and the model answers with
 * `actions`, one per request, in order.
 * @example when('List files in the project', [calls('bash', { command: 'ls' }), says('Found 2 files.')])
 */
export function when(prompt: PromptMatch, actions: readonly PlaybookAction[]): Turn {
  const where = 'when()';
  if (!isPrompt(prompt)) {
    throw new InvalidOptionError(
      `Expected the prompt of ${where} to be a string (the agent's last user text, compared after trimming), a RegExp or any(), got ${describeValue(prompt)}.`,
    );
  }
  if (!Array.isArray(actions) || actions.length === 0) {
    throw new InvalidOptionError(
      `Expected the actions of ${where} to be a non-empty array of calls(…), parallel(…) and says(…), got ${describeValue(actions)}.`,
    );
  }
  actions.forEach((action, i) => {
    if (!isAction(action)) {
      throw new InvalidOptionError(
        `Expected action ${i + 1} of when(${describePrompt(prompt)}) to be calls(…), parallel(…) or says(…), got ${describeValue(action)}.${isThenable(action) ? ' (A promise? An action is not awaited.)' : ''}`,
      );
    }
    if (action instanceof SaysAction && i < actions.length - 1) {
      throw new InvalidOptionError(
        `Expected says() to be the last action of when(${describePrompt(prompt)}), got ${actions.length - 1 - i} more after action ${i + 1}: says() ends the turn, so the agent's next request is a new turn with a prompt of its own. Put those actions in a when() of their own.`,
      );
    }
  });
  return Object.freeze({ prompt, actions: Object.freeze([...actions]) });
}

/**
 * The model calls `tool` with `params` (a JSON object, or a function that
 * gives it when the call is answered, after every earlier `.then()`).
 * @example calls('bash', { command: 'ls' })
 * @example calls('write', () => ({ path: 'out.txt', content: readme }))
 */
export function calls(tool: string, params: ToolParams | LateParams = {}): CallsAction {
  if (typeof tool !== 'string' || !/^[A-Za-z0-9_.:-]{1,128}$/.test(tool)) {
    throw new InvalidOptionError(
      `Expected the tool of calls() to be a tool name of 1 to 128 letters, digits, "_", "-", "." or ":" (OpenAI's tools take letters, digits, "_" and "-", up to 64), got ${describeValue(tool)}.`,
    );
  }
  if (typeof params !== 'function') checkParams(params, `calls(${JSON.stringify(tool)})`);
  return new CallsAction(tool, params, []);
}

/**
 * The model emits `text`, which ends the turn.
 * @example says('Found 2 files.')
 */
export function says(text: string): SaysAction {
  if (typeof text !== 'string') {
    throw new InvalidOptionError(
      `Expected the text of says() to be a string, got ${describeValue(text)}.`,
    );
  }
  return new SaysAction(text);
}

/**
 * The model calls several tools in one answer (parallel tool calls); the
 * next request must carry a result for each.
 * @example parallel(calls('read', { path: 'a.txt' }), calls('read', { path: 'b.txt' }))
 */
export function parallel(...list: CallsAction[]): ParallelAction {
  if (list.length === 0) {
    throw new InvalidOptionError(
      'Expected parallel() to be given at least one calls(…), got none.',
    );
  }
  list.forEach((call, i) => {
    if (!(call instanceof CallsAction)) {
      throw new InvalidOptionError(
        `Expected argument ${i + 1} of parallel() to be calls(…), got ${describeValue(call)}.`,
      );
    }
  });
  return new ParallelAction(list);
}

/** Params as sent: a plain JSON object, copied. Throws an InvalidOptionError naming `where`. */
export function checkParams(params: unknown, where: string): ToolParams {
  const proto = typeof params === 'object' && params !== null ? Object.getPrototypeOf(params) : 0;
  if (proto !== Object.prototype && proto !== null) {
    throw new InvalidOptionError(
      `Expected the params of ${where} to be a plain object (the call's JSON arguments) or a function that returns one, got ${describeValue(params)}.`,
    );
  }
  let copy: unknown;
  try {
    const text = JSON.stringify(params);
    copy = text === undefined ? undefined : JSON.parse(text);
  } catch (error) {
    throw new InvalidOptionError(
      `Expected the params of ${where} to be JSON data: ${error instanceof Error ? error.message : String(error)}.`,
    );
  }
  if (typeof copy !== 'object' || copy === null || Array.isArray(copy)) {
    throw new InvalidOptionError(
      `Expected the params of ${where} to be a JSON object, got an object whose JSON is ${describeValue(copy)} (a toJSON() of its own?).`,
    );
  }
  return copy as ToolParams;
}

function isPrompt(value: unknown): value is PromptMatch {
  return (
    typeof value === 'string' ||
    value instanceof RegExp ||
    (typeof value === 'object' &&
      value !== null &&
      (value as { any?: unknown }).any === true &&
      Object.keys(value).length === 1)
  );
}

function isAction(value: unknown): value is PlaybookAction {
  return (
    value instanceof CallsAction || value instanceof SaysAction || value instanceof ParallelAction
  );
}

function isThenable(value: unknown): boolean {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** A prompt as a person writes it: `"List files"`, `/README/`, `any()`. */
export function describePrompt(prompt: PromptMatch): string {
  if (typeof prompt === 'string') return JSON.stringify(prompt);
  if (prompt instanceof RegExp) return String(prompt);
  return 'any()';
}

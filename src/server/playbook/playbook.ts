import { WaitTimeoutError } from '../../internal/errors.js';
import { DEFAULT_WAIT_MS } from '../../internal/limits.js';
import { goneError, type ServerContext } from '../context.js';
import { PlaybookError } from '../errors.js';
import { formatRequest } from '../logged.js';
import type { LoggedRequest } from '../types.js';
import { waitTimeout } from '../waits.js';
import {
  byTool,
  isDone,
  type PlaybookState,
  pendingThens,
  playbookReport,
  remainingOf,
} from './state.js';
import type { ToolCallRecord, ToolResultRecord, TurnRecord } from './wire.js';

/** An action not taken yet, as `remaining()` lists it. */
export interface RemainingAction {
  step: number;
  turn: number;
  /** The seed harness's form: `calls("write", {"path":"out.txt"})`, `says("Done.")`. */
  describe: string;
}

/**
 * One `api.playbook(turns)` (SPEC PB): it plays the model for the requests
 * its `match` fits, one action per request, and records the conversation.
 * Reads are synchronous and exact once the agent saw its answer (the
 * server writes each record before the bytes of that answer).
 */
export class Playbook {
  /** `options.name`, or `playbook#<n>` (n counts the server's playbooks from 1): the log's `claimedBy`. */
  readonly name: string;
  readonly #ctx: ServerContext;
  readonly #state: PlaybookState;

  /** @internal Made by `MockServer.playbook()`. */
  constructor(ctx: ServerContext, state: PlaybookState) {
    this.#ctx = ctx;
    this.#state = state;
    this.name = state.name;
  }

  /** How many actions were taken so far (requests answered in order). */
  get consumed(): number {
    this.#ctx.sync(false);
    return this.#state.consumed;
  }

  /** How many actions it has in all. */
  get total(): number {
    return this.#state.steps.length;
  }

  /** Whether every action was taken, every `.then()` ran, and no request broke a rule or found it exhausted. */
  get isDone(): boolean {
    this.#ctx.sync(false);
    return isDone(this.#state);
  }

  /** The actions not taken yet: `{ step, turn, describe }`. */
  remaining(): RemainingAction[] {
    this.#ctx.sync(false);
    return remainingOf(this.#state);
  }

  /** Every tool call it answered with, in order: step, turn, toolName, toolCallId, params as sent, seq. */
  toolCalls(): ToolCallRecord[] {
    this.#ctx.sync(false);
    return this.#state.calls.map(copy);
  }

  /** The tool calls of tool `name`. */
  toolCallsFor(name: string): ToolCallRecord[] {
    return byTool(this.toolCalls(), name);
  }

  /**
   * Every tool result the agent sent back, in order of arrival: step and
   * turn of the call it answers, toolName, toolCallId, text (the text parts
   * joined), content as sent, isError, and the request's seq.
   */
  toolResults(): ToolResultRecord[] {
    this.#ctx.sync(false);
    return this.#state.results.map(copy);
  }

  /** The tool results for tool `name`. */
  toolResultsFor(name: string): ToolResultRecord[] {
    return byTool(this.toolResults(), name);
  }

  /** The turns that began: each with its prompt as received and the request that carried it. */
  turns(): TurnRecord[] {
    this.#ctx.sync(false);
    return this.#state.turns.map(copy);
  }

  /** The requests it took (answered or refused), in order. */
  requests(): LoggedRequest[] {
    this.#ctx.sync(false);
    return [...this.#state.requests];
  }

  /**
   * Throw a `PlaybookError` unless every action was taken and nothing went
   * wrong: "Playbook not fully consumed: consumed 1 of 3 actions …;
   * remaining: - calls(…) - says(…)", a request after the last action
   * ("Playbook exhausted …"), a request that broke a turn's rule, a
   * `.then()` or params function that failed.
   */
  assertDone(): void {
    this.#ctx.sync(false);
    const report = playbookReport(this.#state);
    if (report !== undefined) throw new PlaybookError(`${this.#ctx.name}: ${report}`);
  }

  /**
   * Resolve once every action was taken, every `.then()` ran, and the last
   * byte of each answer was written; reject at once with a `PlaybookError`
   * when a request broke a rule or found it exhausted, or when every answer
   * is out and a `.then()` never got its result; with a `WaitTimeoutError`
   * after `timeoutMs` (listing what remains), a `DisposedError` at
   * `dispose()` or `reset()`.
   * @param options.timeoutMs @default 4000
   */
  waitDone(options?: { timeoutMs?: number }): Promise<void> {
    const where = `playbook '${this.name}'.waitDone()`;
    const timeoutMs = waitTimeout(options, where, DEFAULT_WAIT_MS);
    this.#ctx.sync(false);
    const state = this.#state;
    const gone = goneError(
      this.#ctx,
      state.gen,
      `playbook '${this.name}'`,
      'was removed by reset().',
    );
    if (gone) return Promise.reject(gone);
    return this.#ctx.waits
      .until({
        what: `${where} waited (consumed ${state.consumed} of ${state.steps.length})`,
        gen: state.gen,
        timeoutMs,
        check: () => {
          if (state.failures.length > 0) {
            throw new PlaybookError(`${this.#ctx.name}: ${playbookReport(state) ?? ''}`);
          }
          if (state.consumed < state.steps.length) return undefined;
          if (state.requests.some((r) => r.response.endedAt === undefined)) return undefined;
          if (state.running > 0) return undefined;
          // Every answer is out: a .then() still waiting for its result can no longer run.
          if (pendingThens(state).length > 0) {
            throw new PlaybookError(`${this.#ctx.name}: ${playbookReport(state) ?? ''}`);
          }
          return true;
        },
        onTimeout: () => {
          const report = playbookReport(state);
          const writing = state.requests.filter((r) => r.response.endedAt === undefined);
          return new WaitTimeoutError(
            `${this.#ctx.name}: ${where} waited ${timeoutMs} ms. ${report ?? `Every action was taken; still writing: ${writing.map(formatRequest).join('; ')}`}`,
          );
        },
      })
      .then(() => undefined);
  }
}

function copy<T extends object>(record: T): T {
  return structuredClone(record);
}

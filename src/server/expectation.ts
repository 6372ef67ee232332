import { UnusedResponsesError, WaitTimeoutError } from '../internal/errors.js';
import { DEFAULT_WAIT_MS } from '../internal/limits.js';
import { goneError, type ServerContext } from './context.js';
import { formatRequest } from './logged.js';
import { type ExpectState, timesText, wanted } from './mirror.js';
import type { LoggedRequest } from './types.js';
import { waitTimeout } from './waits.js';

/**
 * One `api.expect(match, response)`: how often it was used, and a wait for
 * its last use to be written (HT-06). Reads are synchronous and exact: they
 * apply the worker's events first. After `reset()` it keeps what it had
 * counted; waits on it reject.
 */
export class Expectation {
  /** `options.name`, or `expect#<n>` (n counts the server's expectations from 1). */
  readonly name: string;
  readonly #ctx: ServerContext;
  readonly #state: ExpectState;

  /** @internal Made by `MockServer.expect()`. */
  constructor(ctx: ServerContext, state: ExpectState) {
    this.#ctx = ctx;
    this.#state = state;
    this.name = state.name;
  }

  /** How many requests it answered so far. */
  get used(): number {
    this.#ctx.sync(false);
    return this.#state.used;
  }

  /** Whether it was used `times` times. */
  get isSatisfied(): boolean {
    return this.used >= wanted(this.#state.times);
  }

  /** The requests it answered, in order. */
  requests(): LoggedRequest[] {
    this.#ctx.sync(false);
    return [...this.#state.requests];
  }

  /**
   * Resolve once it was used `times` times and the last byte of each of
   * those responses was written (or its connection ended); reject with a
   * `WaitTimeoutError` after `timeoutMs`, with a `DisposedError` at
   * `dispose()` or `reset()`.
   * @param options.timeoutMs @default 4000
   */
  waitSatisfied(options?: { timeoutMs?: number }): Promise<void> {
    const where = `expectation '${this.name}'.waitSatisfied()`;
    const timeoutMs = waitTimeout(options, where, DEFAULT_WAIT_MS);
    this.#ctx.sync(false);
    const state = this.#state;
    const gone = goneError(
      this.#ctx,
      state.gen,
      `expectation '${this.name}'`,
      'was removed by reset().',
    );
    if (gone) return Promise.reject(gone);
    return this.#ctx.waits
      .until({
        what: `${where} waited (used ${state.used} of ${timesText(state.times)})`,
        gen: state.gen,
        timeoutMs,
        check: () =>
          state.used >= wanted(state.times) &&
          state.requests.every((r) => r.response.endedAt !== undefined)
            ? true
            : undefined,
        onTimeout: () =>
          new WaitTimeoutError(
            `${this.#ctx.name}: ${where} waited ${timeoutMs} ms; ${this.#progress()}.`,
          ),
      })
      .then(() => undefined);
  }

  /** Throw an `UnusedResponsesError` unless it was used `times` times. */
  assertSatisfied(): void {
    if (this.isSatisfied) return;
    throw new UnusedResponsesError(`${this.#ctx.name}: ${this.#progress()}.`);
  }

  #progress(): string {
    const state = this.#state;
    const writing = state.requests.filter((r) => r.response.endedAt === undefined);
    const parts = [
      `expectation '${this.name}' ${state.match} was used ${state.used} of ${timesText(state.times)}`,
    ];
    if (writing.length > 0) parts.push(`still writing: ${writing.map(formatRequest).join('; ')}`);
    const log = this.#ctx.mirror.entries;
    parts.push(
      log.length === 0
        ? 'no request came'
        : `requests so far: ${log.slice(-10).map(formatRequest).join('; ')}${log.length > 10 ? ` (last 10 of ${log.length})` : ''}`,
    );
    return parts.join('; ');
  }
}

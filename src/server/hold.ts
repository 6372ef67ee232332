import { InvalidOptionError, WaitTimeoutError } from '../internal/errors.js';
import { DEFAULT_WAIT_MS } from '../internal/limits.js';
import { goneError, type ServerContext } from './context.js';
import type { HoldState } from './mirror.js';
import type { LoggedRequest, MockServerResponse } from './types.js';
import { waitTimeout } from './waits.js';

/** What a replacement may carry once the headers are out: only more body. */
const AFTER_HEADERS = ['sse', 'chunks', 'eventDelayMs', 'cut'];

/**
 * One `api.hold(match?, { afterEvents? })` (HT-06): it catches the first
 * request that fits, arriving after `hold()` returned. That request is
 * claimed as usual; only its response pauses — before the headers, or
 * after event `afterEvents` was written — until `release()`. A hold not
 * released within the server's `timeoutMs` ends its request (504 before the
 * headers, the connection cut after them); `dispose()` ends it at once.
 */
export class HeldRequest {
  readonly #ctx: ServerContext;
  readonly #id: number;
  readonly #state: HoldState;
  readonly #afterEvents: number | undefined;
  readonly #label: string;
  #released = false;

  /** @internal Made by `MockServer.hold()`. */
  constructor(
    ctx: ServerContext,
    id: number,
    state: HoldState,
    afterEvents: number | undefined,
    label: string,
  ) {
    this.#ctx = ctx;
    this.#id = id;
    this.#state = state;
    this.#afterEvents = afterEvents;
    this.#label = label;
  }

  /** The request it caught, once one came (undefined before). */
  get request(): LoggedRequest | undefined {
    this.#ctx.sync(false);
    return this.#state.request;
  }

  /**
   * Resolve with the request it caught, once one came.
   * @param options.timeoutMs @default 4000
   */
  waitReceived(options?: { timeoutMs?: number }): Promise<LoggedRequest> {
    return this.#wait('waitReceived', options, () => this.#state.request);
  }

  /**
   * Resolve with the request once its response is paused at the hold point
   * (before the headers, or after event `afterEvents` was written). Rejects
   * at once (a `WaitTimeoutError` that does not wait for `timeoutMs`, whose
   * message says what ended it) when the response ended before it
   * got there — a cut or `resetBeforeHeaders` before the hold point, a
   * `wireBase64` answer (written whole, it has no hold point), a client
   * that left, or a `release()` that came first — since it will never pause.
   * @param options.timeoutMs @default 4000
   */
  waitBlocked(options?: { timeoutMs?: number }): Promise<LoggedRequest> {
    return this.#wait('waitBlocked', options, () => {
      const { stage, request } = this.#state;
      if (stage === 'blocked') return request;
      const endedBy = request?.response.endedBy;
      if (request === undefined || endedBy === undefined) return undefined;
      const point =
        this.#afterEvents === undefined ? 'before the headers' : `after event ${this.#afterEvents}`;
      const why = this.#released
        ? 'release() came before it got there, so it passed without pausing'
        : endedBy === 'cut'
          ? 'a cut or resetBeforeHeaders ended it first'
          : endedBy === 'client-abort'
            ? 'the client left first'
            : 'a wireBase64 answer is written whole, without a hold point';
      throw new WaitTimeoutError(
        `${this.#ctx.name}: ${this.#label}.waitBlocked(): the response to request #${request.seq} ended (${endedBy}) before it reached the hold point (${point}), so it will never pause: ${why}.${request.error ? ` Its log entry says: ${request.error}` : ''}`,
      );
    });
  }

  /**
   * Let the response go on; with `response`, that one is served instead.
   * Once the headers are out (`afterEvents`), a replacement may only carry
   * more body: `sse` or `chunks` (with `eventDelayMs`, and a `cut` counted
   * from the release), and only after a response that is itself chunked
   * (`sse`, `chunks`): after the headers of a json, text or bodyBase64 body
   * (sent with content-length) or of one without a body (HEAD, 204, 304)
   * nothing else can follow, and release() throws an `InvalidOptionError`
   * saying so once the server knows the held response (when the request
   * came, or, for a function's response, when it paused). A replacement
   * given earlier is then not used: the scripted body is sent and the
   * entry's `error` says why. A release before the request came lets it
   * pass without pausing. Idempotent; a no-op after `dispose()`.
   */
  release(response?: MockServerResponse): void {
    if (this.#ctx.disposed || this.#released) return;
    this.#ctx.sync(true);
    const where = `release() of ${this.#label}`;
    let wire: ReturnType<ServerContext['checkResponse']> | undefined;
    if (response !== undefined) {
      const fixed = this.#state.fixed;
      if (this.#afterEvents !== undefined && fixed !== undefined) {
        const seq = this.#state.request?.seq;
        throw new InvalidOptionError(
          `The response passed to ${where} cannot be served: the hold is after the headers of the response to request #${seq}, and ${fixed}, so nothing else can follow them (the client would read the replacement's bytes as that body). Call release() without a response to send the scripted body; to replace the whole response, hold it before the headers (hold() without afterEvents); to pause in the middle of a body, script it as chunks or sse.`,
        );
      }
      if (this.#afterEvents !== undefined && typeof response === 'object' && response !== null) {
        const extra = Object.keys(response).filter((k) => !AFTER_HEADERS.includes(k));
        if (extra.length > 0) {
          throw new InvalidOptionError(
            `The response passed to ${where} sets ${extra.map((k) => `\`${k}\``).join(', ')}, but the hold is after event ${this.#afterEvents}: the status line and headers are already out. A replacement there may only carry ${AFTER_HEADERS.join(', ')}.`,
          );
        }
      }
      wire = this.#ctx.checkResponse(response, `the response passed to ${where}`);
    }
    this.#released = true;
    this.#state.released = true;
    this.#ctx.post({ type: 'release', gen: this.#state.gen, id: this.#id, response: wire });
  }

  #wait(
    name: string,
    options: { timeoutMs?: number } | undefined,
    check: () => LoggedRequest | undefined,
  ): Promise<LoggedRequest> {
    const where = `${this.#label}.${name}()`;
    const timeoutMs = waitTimeout(options, where, DEFAULT_WAIT_MS);
    this.#ctx.sync(false);
    const state = this.#state;
    const gone = goneError(this.#ctx, state.gen, this.#label, 'was ended by reset().');
    if (gone) return Promise.reject(gone);
    return this.#ctx.waits.until({
      what: `${where} waited`,
      gen: state.gen,
      timeoutMs,
      check,
      onTimeout: () => {
        const seen = this.#ctx.mirror.entries.length;
        const how =
          state.request === undefined
            ? `no request fitting it came (${seen} request${seen === 1 ? '' : 's'} so far)`
            : `request #${state.request.seq} came but its response was not paused yet`;
        return new WaitTimeoutError(`${this.#ctx.name}: ${where} waited ${timeoutMs} ms; ${how}.`);
      },
    });
  }
}

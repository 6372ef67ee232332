import { DisposedError, InvalidResponseError, UnusedResponsesError, WaitTimeoutError } from '../internal/errors.js';
import { DEFAULT_WAIT_MS } from '../internal/limits.js';
import { checkOptionKeys, optionError } from '../internal/options.js';
import { Asks } from './asks.js';
import type { ServerContext } from './context.js';
import { serverEnv } from './env.js';
import { ServerWorkerError } from './errors.js';
import { Expectation } from './expectation.js';
import { HeldRequest } from './hold.js';
import type { ServerLink } from './link.js';
import { formatRequest } from './logged.js';
import { describeRequestMatch, encodeMatch } from './match.js';
import type { FifoState, Mirror } from './mirror.js';
import type { ServerSettings } from './options.js';
import type { ControlMessage, WireAnswer } from './protocol.js';
import { notDoneReport, summariseResponse } from './report.js';
import type { LoggedRequest, MockServerResponse, RequestMatch, ResponseHandler, WireHttpResponse } from './types.js';
import { Waits, waitTimeout } from './waits.js';
import { toWireResponse } from './response.js';

/** The options of `expect()`. */
export interface ExpectOptions {
  /** Its name in `claimedBy`, reports and the unmatched 500. @default `expect#<n>` */
  name?: string;
  /** How many requests it answers (`'always'`: every one that fits). @default the response's `times`, else 1 */
  times?: number | 'always';
  /** `assertDone()` does not ask for it. @default the response's `optional`, else false */
  optional?: boolean;
}

/** The options of `hold()`. */
export interface HoldOptions {
  /** Pause after this many SSE events (or chunks) were written; without it, before the headers. */
  afterEvents?: number;
}

/**
 * A scripted HTTP/SSE server (HT-01 … HT-07, HT-12), made by
 * {@link createMockServer}. It serves from a worker thread, so everything
 * scripted as data is answered while the test's thread is blocked in
 * `execFileSync`; reads (`requests()`, `assertDone()`, `used`) are
 * synchronous and exact once a client saw its answer.
 */
export class MockServer implements AsyncDisposable {
  /** `http://127.0.0.1:<port>` (`http://localhost` for a Unix socket). */
  readonly url: string;
  /** The Unix socket path it listens on, for `listen: { path }`. */
  readonly socketPath: string | undefined;
  readonly #settings: ServerSettings;
  readonly #link: ServerLink;
  readonly #mirror: Mirror;
  readonly #ctx: ServerContext;
  readonly #asks: Asks;
  readonly #waits: Waits;
  readonly #onDispose: () => void;
  #expects = 0;
  #fifo = 0;
  #holds = 0;
  #disposing: Promise<void> | undefined;
  #failureThrown = false;

  /** @internal Made by `createMockServer()`, once the worker listens. */
  constructor(init: {
    settings: ServerSettings;
    link: ServerLink;
    mirror: Mirror;
    url: string;
    socketPath: string | undefined;
    onDispose: () => void;
  }) {
    this.url = init.url;
    this.socketPath = init.socketPath;
    this.#settings = init.settings;
    this.#link = init.link;
    this.#mirror = init.mirror;
    this.#onDispose = init.onDispose;
    this.#waits = new Waits(() => this.#link.ref());
    const server = this;
    this.#ctx = {
      name: `mock server ${init.socketPath ?? init.url}`,
      settings: init.settings,
      mirror: init.mirror,
      waits: this.#waits,
      get disposed() {
        return server.#disposing !== undefined;
      },
      sync: (scripting) => this.#sync(scripting),
      post: (message) => this.#post(message),
      checkResponse: (value, where) => this.#check(value, where),
    };
    this.#asks = new Asks(this.#ctx);
    this.#mirror.onAsk = (event) => this.#asks.answer(event);
    this.#mirror.onChange = () => this.#waits.notify();
    links.set(this, this.#link);
    this.#link.onFailure = () => {
      const failure = this.#link.failure as ServerWorkerError;
      this.#waits.fail(() => new ServerWorkerError(failure.message, { cause: failure.cause }));
    };
  }

  /**
   * A copy of `base` (`process.env` when called) with the server's variables:
   * `OPENAI_BASE_URL=<url>/v1`, `ANTHROPIC_BASE_URL=<url>`, both API keys
   * `'shimkit-test'`, and `127.0.0.1,localhost` added to NO_PROXY and no_proxy;
   * the `env` option changes or drops them.
   * @example execFileSync('my-agent', [], { env: api.env() })
   */
  env(base?: NodeJS.ProcessEnv): Record<string, string> {
    return serverEnv(this.url, this.#settings.env, base);
  }

  /**
   * Answer requests that fit `match` with `response` (data, or a function
   * run on the test's thread). Expectations are tried in the order they were
   * made, before the FIFO; each answers `times` requests.
   * @example api.expect({ method: 'POST', path: '/v1/chat/completions', json: { stream: true } }, sse.chat('hi'), { name: 'plan' })
   */
  expect(match: RequestMatch, response: MockServerResponse | ResponseHandler, options?: ExpectOptions): Expectation {
    this.#sync(true);
    const id = this.#expects + 1;
    const where = `expect() #${id}`;
    const o = checkOptionKeys(options, ['name', 'times', 'optional'], where);
    if (o.name !== undefined && (typeof o.name !== 'string' || o.name === '')) {
      throw optionError(where, 'name', 'a non-empty string', o.name);
    }
    const name = o.name ?? `expect#${id}`;
    const encoded = encodeMatch(match, where, (fn) => this.#asks.addPredicate(fn));
    const { answer, wire } = this.#answer(response, `the response passed to ${where}`);
    const times = checkTimes(where, o.times ?? wire?.times ?? 1);
    const optional = o.optional ?? wire?.optional ?? false;
    if (typeof optional !== 'boolean') throw optionError(where, 'optional', 'true or false', optional);
    this.#expects = id;
    const gen = this.#mirror.gen;
    const state = {
      id,
      gen,
      name,
      times,
      optional,
      summary: summariseResponse(wire),
      match: describeRequestMatch(encoded.wire),
      used: 0,
      requests: [] as LoggedRequest[],
    };
    this.#mirror.expectations.set(id, state);
    this.#post({ type: 'expect', gen, id, name, match: encoded.wire, answer, times });
    return new Expectation(this.#ctx, state);
  }

  /**
   * Add responses to the FIFO: each answers the next `times` requests no
   * expectation takes (`claimedBy: 'fifo#<n>'`).
   * @example api.enqueue([reply.status(429, { retryAfterMs: 1 }), sse.chat('ok')])
   */
  enqueue(
    response: MockServerResponse | ResponseHandler | Array<MockServerResponse | ResponseHandler>,
  ): void {
    this.#sync(true);
    const list = Array.isArray(response) ? response : [response];
    const entries: Array<{ index: number; answer: WireAnswer; times: number }> = [];
    const states: FifoState[] = [];
    list.forEach((one, i) => {
      const index = this.#fifo + i + 1;
      const where = `enqueue() #${index}`;
      const { answer, wire } = this.#answer(one, `the response passed to ${where}`);
      const times = checkTimes(where, wire?.times ?? 1);
      entries.push({ index, answer, times });
      states.push({ index, times, optional: wire?.optional ?? false, summary: summariseResponse(wire), used: 0 });
    });
    if (entries.length === 0) return;
    this.#fifo += entries.length;
    this.#mirror.fifo.push(...states);
    this.#post({ type: 'enqueue', gen: this.#mirror.gen, entries });
  }

  /**
   * Pause the response to the next request that fits `match` (any request
   * without it): before its headers, or after event `afterEvents`.
   * @example const held = api.hold({ path: '/v1/responses' }, { afterEvents: 2 }); … await held.waitBlocked(); held.release();
   */
  hold(match?: RequestMatch, options?: HoldOptions): HeldRequest {
    this.#sync(true);
    const id = this.#holds + 1;
    const where = `hold() #${id}`;
    const o = checkOptionKeys(options, ['afterEvents'], where);
    const after = o.afterEvents;
    if (after !== undefined && (!Number.isInteger(after) || after < 0)) {
      throw optionError(where, 'afterEvents', 'an integer from 0', after);
    }
    const encoded = match === undefined ? undefined : encodeMatch(match, where, () => 0);
    if (encoded?.predicate) {
      throw optionError(where, 'match', 'a match without a predicate (a hold is decided in the server thread)', match);
    }
    this.#holds = id;
    const gen = this.#mirror.gen;
    const state = { gen, stage: 'waiting' as const, request: undefined };
    this.#mirror.holds.set(id, state);
    this.#post({ type: 'hold', gen, id, match: encoded?.wire, afterEvents: after });
    const label = `hold() #${id}${encoded ? ` ${describeRequestMatch(encoded.wire)}` : ''}`;
    return new HeldRequest(this.#ctx, id, state, after, label);
  }

  /** Every request so far, in order (HT-07). Exact once a client saw its answer. */
  requests(): LoggedRequest[] {
    this.#sync(false);
    return [...this.#mirror.entries];
  }

  /** The latest request, if any. */
  lastRequest(): LoggedRequest | undefined {
    this.#sync(false);
    return this.#mirror.entries.at(-1);
  }

  /**
   * Resolve with the log once it has `n` requests; reject with a
   * `WaitTimeoutError` after `timeoutMs`, a `DisposedError` at `dispose()`.
   * @param options.timeoutMs @default 4000
   */
  waitForRequests(n: number, options?: { timeoutMs?: number }): Promise<LoggedRequest[]> {
    const where = 'waitForRequests()';
    if (!Number.isInteger(n) || n < 0) throw optionError(where, 'n', 'an integer from 0', n);
    const timeoutMs = waitTimeout(options, where, DEFAULT_WAIT_MS);
    this.#sync(true);
    const log = this.#mirror.entries;
    return this.#waits.until({
      what: `waitForRequests(${n}) waited`,
      timeoutMs,
      check: () => (log.length >= n ? [...log] : undefined),
      onTimeout: () =>
        new WaitTimeoutError(
          `${this.#ctx.name}: waitForRequests(${n}) waited ${timeoutMs} ms; ${log.length} came${log.length > 0 ? `: ${log.slice(-10).map(formatRequest).join('; ')}` : ''}.`,
        ),
    });
  }

  /**
   * Throw an `UnusedResponsesError` if an expectation or FIFO entry was not
   * used as often as scripted (unless `optional`), or — under `strict` — a
   * request had no scripted response. The message lists them and the log.
   */
  assertDone(): void {
    this.#sync(false);
    const report = notDoneReport(this.#ctx, this.#settings.strict);
    if (report) throw new UnusedResponsesError(report);
  }

  /**
   * Forget the script (expectations, FIFO, holds) and the log, as a new
   * server would have them; held requests end (504), waits on the old
   * script reject with `DisposedError`.
   */
  reset(): void {
    this.#sync(true);
    const old = this.#mirror.gen;
    const gen = old + 1;
    this.#post({ type: 'reset', gen });
    this.#mirror.reset(gen);
    this.#asks.clear();
    this.#expects = 0;
    this.#fifo = 0;
    this.#holds = 0;
    this.#waits.fail((what) => new DisposedError(this.#ctx.name, `was reset() while ${what}.`), old);
  }

  /**
   * Stop serving: pending waits reject (`DisposedError`), holds end, open
   * connections (keep-alive ones too) close at once, the worker ends; then a
   * strict server throws its `assertDone()` report. Idempotent: a later call
   * resolves once the first is done, and throws nothing.
   */
  dispose(): Promise<void> {
    if (this.#disposing) return this.#disposing.then(ignore, ignore);
    this.#disposing = this.#dispose();
    return this.#disposing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }

  async #dispose(): Promise<void> {
    const failure = this.#link.failure;
    this.#waits.fail((what) => new DisposedError(this.#ctx.name, `was disposed while ${what}.`));
    if (!failure) this.#link.post({ type: 'dispose' });
    await this.#link.stop();
    this.#onDispose();
    if (failure && !this.#failureThrown) throw new ServerWorkerError(failure.message, { cause: failure.cause });
    if (this.#settings.strict) this.assertDone();
  }

  #sync(scripting: boolean): void {
    const failure = this.#link.failure;
    if (failure && this.#disposing === undefined) {
      this.#failureThrown = true;
      throw new ServerWorkerError(failure.message, { cause: failure.cause });
    }
    if (scripting && this.#disposing !== undefined) throw new DisposedError(this.#ctx.name);
    this.#link.drain();
  }

  #post(message: ControlMessage): void {
    if (this.#disposing === undefined) this.#link.post(message);
  }

  #answer(
    response: unknown,
    where: string,
  ): { answer: WireAnswer; wire: WireHttpResponse | undefined } {
    if (typeof response === 'function') {
      return { answer: { handler: this.#asks.addHandler(response as ResponseHandler) }, wire: undefined };
    }
    const wire = this.#check(response, where);
    return { answer: { wire }, wire };
  }

  #check(value: unknown, where: string): WireHttpResponse {
    const wire = toWireResponse(value, where);
    if (wire.cut?.how === 'rst' && this.socketPath !== undefined) {
      throw new InvalidResponseError(
        `${where}: cut.how 'rst' needs a TCP connection, and this server listens on the Unix socket ${this.socketPath}. Use 'fin' or 'stall', or listen on TCP (the default).`,
      );
    }
    return wire;
  }
}

function ignore(): void {}

const links = new WeakMap<MockServer, ServerLink>();

/** @internal For shimkit's own tests of the ServerWorkerError path: the worker throws from a timer. */
export function crashServerWorker(server: MockServer): void {
  links.get(server)?.post({ type: 'crash' });
}

/** `times` as the worker counts it: `'always'` (Infinity in a wire response) never runs out. */
function checkTimes(where: string, times: unknown): number {
  if (times === 'always' || times === Number.POSITIVE_INFINITY) return Number.POSITIVE_INFINITY;
  if (!Number.isInteger(times) || (times as number) < 1 || (times as number) > 1_000_000) {
    throw optionError(where, 'times', "an integer from 1 to 1000000, or 'always'", times);
  }
  return times as number;
}

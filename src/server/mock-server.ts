import {
  DisposedError,
  UnsupportedHereError,
  UnusedResponsesError,
  WaitTimeoutError,
} from '../internal/errors.js';
import { type Tracked, trackLeak, untrackLeak } from '../internal/leak-registry.js';
import { DEFAULT_WAIT_MS } from '../internal/limits.js';
import { optionError } from '../internal/options.js';
import { Asks } from './asks.js';
import type { ReplayEntry } from './cassette-replay.js';
import type { ServerContext } from './context.js';
import { checkEnvBase, serverEnv } from './env.js';
import { ServerWorkerError } from './errors.js';
import type { Expectation } from './expectation.js';
import { warnIfForgottenAtExit } from './forgotten.js';
import type { HeldRequest } from './hold.js';
import { serverLeakHolds } from './leak-holds.js';
import type { ServerLink } from './link.js';
import { formatRequest } from './logged.js';
import type { Mirror } from './mirror.js';
import type { ServerSettings } from './options.js';
import type { Turn } from './playbook/actions.js';
import type { PlaybookJson } from './playbook/json.js';
import type { Playbook } from './playbook/playbook.js';
import type { ControlMessage } from './protocol.js';
import { notDone, notDoneReport } from './report.js';
import { type ExpectOptions, type HoldOptions, type PlaybookOptions, Scripting } from './script.js';
import { Settler } from './settle.js';
import type { LoggedRequest, MockServerResponse, RequestMatch, ResponseHandler } from './types.js';
import { Waits, waitTimeout } from './waits.js';

/**
 * A scripted HTTP/SSE server (HT-01 … HT-07, HT-12), made by
 * {@link createMockServer}. It serves from a worker thread, so everything
 * scripted as data is answered while the test's thread is blocked in
 * `execFileSync`; reads (`requests()`, `assertDone()`, `used`) are
 * synchronous and exact once a client saw its answer.
 */
export class MockServer implements AsyncDisposable {
  /**
   * Where TCP clients connect: `http://127.0.0.1:<port>` (the real port, also
   * for `port: 0`; IPv6 hosts in brackets). On a Unix socket it is
   * `http://localhost`: only the origin a client puts in its requests while
   * it connects to `socketPath` (`curl --unix-socket <socketPath>
   * http://localhost/v1/models`); on its own that URL reaches nothing of this
   * server (it means port 80), which is why `env()` refuses a socket server.
   */
  readonly url: string;
  /** The Unix socket path it listens on, for `listen: { path }`; undefined on TCP. */
  readonly socketPath: string | undefined;
  /**
   * With `requireToken: true`, the secret every request must carry
   * (`authorization: Bearer <token>` or `x-api-key: <token>`); `env()` sets
   * the API keys to it. Undefined without `requireToken`.
   * @example execFileSync('curl', ['-H', `authorization: Bearer ${api.token}`, `${api.url}/v1/models`])
   */
  readonly token: string | undefined;
  readonly #settings: ServerSettings;
  readonly #link: ServerLink;
  readonly #mirror: Mirror;
  readonly #ctx: ServerContext;
  readonly #asks: Asks;
  readonly #waits: Waits;
  readonly #onDispose: () => void;
  readonly #scripting: Scripting;
  readonly #settler: Settler;
  /** A replayed cassette's interactions, scripted first (and again after reset()). */
  readonly #replay: readonly ReplayEntry[];
  #disposing: Promise<void> | undefined;
  #failureThrown = false;
  /** The leak sanitizer's record of it (LK-02), when made in a sanitizer scope. */
  readonly #leak: Tracked | undefined;

  /** Stops the exit warning of a strict server never disposed (forgotten.ts). */
  readonly #forgetExitWarning: () => void;

  /** @internal Made by `createMockServer()`, once the worker listens. */
  constructor(init: {
    settings: ServerSettings;
    link: ServerLink;
    mirror: Mirror;
    url: string;
    socketPath: string | undefined;
    token?: string | undefined;
    onDispose: () => void;
    replay?: readonly ReplayEntry[];
    /** The stack frame that called createMockServer(), for the exit warning. */
    createdAt?: string;
  }) {
    this.url = init.url;
    this.socketPath = init.socketPath;
    this.token = init.token;
    this.#settings = init.settings;
    this.#link = init.link;
    this.#mirror = init.mirror;
    this.#onDispose = init.onDispose;
    this.#replay = init.replay ?? [];
    this.#waits = new Waits(() => this.#link.ref());
    this.#settler = new Settler(init.link, init.mirror);
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
      checkResponse: (value, where) => this.#scripting.check(value, where),
    };
    this.#asks = new Asks(this.#ctx);
    this.#scripting = new Scripting(this.#ctx, this.#asks, init.socketPath);
    this.#leak = trackLeak('mock server', init.socketPath ?? init.url, {
      holds: () => this.leakHolds(),
      endpoints: () => [
        init.socketPath ? `unix:${init.socketPath}` : `tcp:${new URL(init.url).port}`,
      ],
      dispose: () => this.dispose(),
    });
    this.#mirror.onAsk = (event) => this.#asks.answer(event);
    this.#mirror.onAskDropped = (ask) => this.#asks.drop(ask);
    this.#mirror.onChange = () => this.#waits.notify();
    links.set(this, this.#link);
    this.#link.onFailure = () => {
      const failure = this.#link.failure as ServerWorkerError;
      this.#waits.fail(() => new ServerWorkerError(failure.message, { cause: failure.cause }));
    };
    this.#scripting.replay(this.#replay);
    this.#forgetExitWarning = init.settings.strict
      ? warnIfForgottenAtExit(this.#ctx.name, init.createdAt, () => this.#reportAtExit())
      : () => {};
  }

  /**
   * A copy of `base` (`process.env` when called) with the server's variables:
   * `OPENAI_BASE_URL=<url>/v1`, `ANTHROPIC_BASE_URL=<url>`, both API keys
   * `'shimkit-test'` (with `requireToken`: `token`), and
   * `127.0.0.1,localhost,::1,[::1]` added to NO_PROXY and no_proxy;
   * the `env` option changes them (a string) or leaves one out (null: the
   * base's own value, if any, stays). While a cassette records (mode
   * `record`, `record-missing`, or `auto` without a file), the requests go on
   * to the real API: `OPENAI_API_KEY` and `ANTHROPIC_API_KEY` keep the base's
   * own values then, and are `'shimkit-test'` only where the base has none
   * (the cassette keeps them `[redacted]`). A replay always gets
   * `'shimkit-test'`.
   *
   * Throws `UnsupportedHereError` for a server on a Unix socket (`listen: {
   * path }`): no SDK reaches a socket through a base URL (`http://localhost`
   * would send it to port 80). Listen on TCP for env(), or hand the client
   * `socketPath`. An argument that is not an env object is an
   * `InvalidOptionError`.
   * @example execFileSync('my-agent', [], { env: api.env() })
   */
  env(base?: NodeJS.ProcessEnv): Record<string, string> {
    if (base !== undefined) checkEnvBase(base, 'env()');
    if (this.socketPath !== undefined) {
      throw new UnsupportedHereError(
        `${this.#ctx.name}: env() gives base URLs, and this server listens on a Unix socket, which the SDKs cannot reach through OPENAI_BASE_URL or ANTHROPIC_BASE_URL (its url, http://localhost, would send them to port 80). Listen on TCP for env() (the default: createMockServer() or listen: { port: 0 }), or hand the socket to the client: curl --unix-socket ${this.socketPath} http://localhost/v1/models, or undici's new Agent({ connect: { socketPath } }).`,
      );
    }
    const cassette = this.#settings.cassette;
    const recording = cassette !== undefined && cassette.mode !== 'replay';
    return serverEnv(this.url, this.#settings.env, base, { recording, token: this.token });
  }

  /**
   * Answer requests that fit `match` with `response` (data, or a function
   * run on the test's thread). Expectations are tried in the order they were
   * made, before the FIFO; each answers `times` requests.
   * @example api.expect({ method: 'POST', path: '/v1/chat/completions', json: { stream: true } }, sse.chat('hi'), { name: 'plan' })
   */
  expect(
    match: RequestMatch,
    response: MockServerResponse | ResponseHandler,
    options?: ExpectOptions,
  ): Expectation {
    this.#sync(true);
    return this.#scripting.expect(match, response, options);
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
    this.#scripting.enqueue(response);
  }

  /**
   * Play the model for an agent (SPEC PB): each model request the playbook
   * takes — a POST to `/v1/chat/completions`, `/v1/responses` or
   * `/v1/messages` (also without `/v1`) that fits `match` — gets its next
   * action, in the endpoint's wire format, streamed when the request says
   * `stream: true`: `calls()` a tool call, `parallel()` several, `says()`
   * text that ends the turn. A turn's first request must carry its prompt
   * as its last user text, every later one a result for each tool call of
   * the answer before; a request that breaks that gets a 500
   * (`x-should-retry: false`) saying what was expected and what came, and
   * takes nothing. It takes its place among the expectations in the order
   * made. `turns` may be the JSON form (`{ name?, match?, turns: [{ when,
   * do: [{ calls, params } | { says } | { parallel }] }] }`).
   * @example
   * const play = api.playbook([when('List files', [calls('bash', { command: 'ls' }), says('Found 2 files.')])]);
   */
  playbook(turns: readonly Turn[] | PlaybookJson, options?: PlaybookOptions): Playbook {
    this.#sync(true);
    return this.#scripting.playbook(turns, options);
  }

  /**
   * Pause the response to the next request that fits `match` (any request
   * without it): before its headers, or after event `afterEvents`.
   * @example const held = api.hold({ path: '/v1/responses' }, { afterEvents: 2 }); … await held.waitBlocked(); held.release();
   */
  hold(match?: RequestMatch, options?: HoldOptions): HeldRequest {
    this.#sync(true);
    return this.#scripting.hold(match, options);
  }

  /**
   * Every request so far, in order (HT-07). Exact once a client saw its
   * answer; a client that left before it was finished (and before this
   * call) is `client-abort`: while a response is unfinished, the call
   * waits for the worker to catch up (a round trip, at most 25 ms).
   */
  requests(): LoggedRequest[] {
    this.#read();
    return [...this.#mirror.entries];
  }

  /** The latest request, if any (settled as `requests()`). */
  lastRequest(): LoggedRequest | undefined {
    this.#read();
    return this.#mirror.entries.at(-1);
  }

  /**
   * Resolve with the log once it has `n` requests; reject with a
   * `WaitTimeoutError` after `timeoutMs`, a `DisposedError` at `dispose()`
   * or at `reset()` (which empties the log it counts).
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
      gen: this.#mirror.gen, // a reset() rejects it: the log it counts is gone
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
   * used as often as scripted (unless `optional`), a playbook was not played
   * through (actions left, a request it refused or had no action for, a
   * function of it that failed), or — under `strict` — a request had no
   * scripted response. The message lists them and the log. Once it threw,
   * a strict server never disposed no longer warns at the process's exit
   * (the test has the report).
   */
  assertDone(): void {
    this.#read();
    const report = notDoneReport(this.#ctx, this.#settings.strict);
    if (!report) return;
    this.#forgetExitWarning(); // the test has the report: no need to repeat it at exit
    throw new UnusedResponsesError(report);
  }

  /**
   * Forget the script (expectations, FIFO, holds) and the log, as a new
   * server would have them (a replayed cassette's interactions are
   * scripted again; what was recorded is kept for the file); held requests
   * end (a 504, or after their headers a body cut short), and waits on the
   * old script — `waitForRequests()`, `waitSatisfied()`, a hold's waits —
   * reject with `DisposedError` ("was reset() while …").
   */
  reset(): void {
    this.#sync(true);
    const old = this.#mirror.gen;
    const gen = old + 1;
    this.#post({ type: 'reset', gen });
    this.#mirror.reset(gen);
    this.#asks.clear();
    this.#scripting.reset();
    this.#waits.fail(
      (what) => new DisposedError(this.#ctx.name, `was reset() while ${what}.`),
      old,
    );
    this.#scripting.replay(this.#replay);
  }

  /**
   * Stop serving: pending waits reject (`DisposedError`), open connections
   * (keep-alive ones too) close at once — a held request's as well, without
   * the rest of its response (before its headers the client gets no answer,
   * curl 52; after some events the body ends without its last chunk, curl
   * 18) — and the worker ends; a
   * recording cassette is written; then a strict server throws its
   * `assertDone()` report. Idempotent: a later call resolves once the first
   * is done, and throws nothing.
   */
  dispose(): Promise<void> {
    if (this.#disposing) return this.#disposing.then(ignore, ignore);
    this.#disposing = this.#dispose();
    untrackLeak(this.#leak, this.#disposing);
    return this.#disposing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }

  async #dispose(): Promise<void> {
    this.#forgetExitWarning();
    const failure = this.#link.failure;
    this.#waits.fail((what) => new DisposedError(this.#ctx.name, `was disposed while ${what}.`));
    if (!failure) this.#link.post({ type: 'dispose' });
    await this.#link.stop();
    this.#onDispose();
    if (failure && !this.#failureThrown)
      throw new ServerWorkerError(failure.message, { cause: failure.cause });
    if (this.#settings.strict) this.assertDone();
  }

  /**
   * @internal What the leak sanitizer reports of an undisposed server
   * (LK-02): held requests, open client connections, unread SSE bytes.
   */
  leakHolds(): string[] {
    if (this.#disposing !== undefined) return [];
    const link = this.#link;
    const port = this.socketPath === undefined ? Number(new URL(this.url).port) : undefined;
    return serverLeakHolds({
      mirror: this.#mirror,
      drain: () => {
        if (!link.failure) link.drain();
      },
      openConnections: () => link.openConnections(),
      port: port === undefined || !(port > 0) ? undefined : port,
    });
  }

  /** At the process's exit, for a strict server never disposed: its report, or undefined when done. */
  #reportAtExit(): { text: string; missing: number } | undefined {
    if (this.#disposing !== undefined || this.#link.failure) return undefined;
    this.#link.drain();
    return notDone(this.#ctx, true);
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

  /** A read of the log: drained, and settled while a response is unfinished (settle.ts). */
  #read(): void {
    this.#sync(false);
    if (this.#disposing === undefined) this.#settler.settle();
  }

  #post(message: ControlMessage): void {
    if (this.#disposing === undefined) this.#link.post(message);
  }
}

function ignore(): void {}

const links = new WeakMap<MockServer, ServerLink>();

/** @internal For shimkit's own tests of the ServerWorkerError path: the worker throws from a timer. */
export function crashServerWorker(server: MockServer): void {
  links.get(server)?.post({ type: 'crash' });
}

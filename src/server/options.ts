import { posix } from 'node:path';
import { describeValue } from '../internal/describe.js';
import { InvalidOptionError } from '../internal/errors.js';
import { checkMs, checkOptionKeys, optionError } from '../internal/options.js';
import { type CassetteSettings, resolveServerCassette } from './cassette.js';
import type { ServerCassetteOptions } from './cassette-format.js';
import type { WireListen } from './protocol.js';
import type { ResponseHandler } from './types.js';

/** What answers a request that no expectation nor FIFO entry takes. */
export type UnmatchedHandler = ResponseHandler;

/** Options of {@link createMockServer}. Each is checked when given: a bad one throws `InvalidOptionError`. */
export interface MockServerOptions {
  /**
   * `dispose()` throws `UnusedResponsesError` when a response was not used
   * as often as scripted, or a request had no scripted response (as a
   * strict mock binary does, MB-22). Needs `unmatched: 'fail'`. A strict
   * server never disposed that is not done when the process exits (its
   * worker never keeps the process alive) prints a warning on stderr then:
   * its url, where `createMockServer()` was called, how many scripted uses
   * were never made, its report, and to `await using` it or call
   * `assertDone()`. The test itself still passes: dispose it (`await
   * using`, or the `mockServer` fixture of shimkit/vitest) to fail it.
   * @default false
   * @example await using api = await createMockServer({ strict: true });
   */
  strict?: boolean;
  /**
   * A request that no expectation nor FIFO entry takes gets: `'fail'`, a 500
   * with `x-should-retry: false` whose JSON error (and log entry) names the
   * closest expectation and the call to add; `'echo'`, a 200 with the
   * request's own body and content-type; or a function's response (it runs
   * on the test's thread, like a function response).
   * @default 'fail'
   * @example createMockServer({ unmatched: (request) => reply.json({ path: request.path }) })
   */
  unmatched?: 'fail' | 'echo' | UnmatchedHandler;
  /**
   * How the `'fail'` answer (its 500's message and its log entry's `error`)
   * ends: the call that would answer such a request. `{method}` and
   * `{path}` are the request's; `{shPath}` is its path as one POSIX shell
   * word (quoted when it needs to be), for advice that is a command.
   * @default "api.expect({ method: '{method}', path: '{path}' }, …) or api.enqueue(…)"
   * @example createMockServer({ unmatchedAdvice: 'mock.on("{method}", "{path}")' })
   */
  unmatchedAdvice?: string;
  /**
   * Where to listen: TCP (port 0 picks a free port; `url` has the real one)
   * or an absolute Unix socket path, in a dir that exists (`url` is then
   * `http://localhost`, only the origin clients send while they connect to
   * `socketPath`: `curl --unix-socket`; `env()` refuses such a server, as no
   * SDK reaches a socket through a base URL).
   * @default { host: '127.0.0.1', port: 0 }
   */
  listen?: { host?: string; port?: number } | { path: string };
  /**
   * Record the answers of a real API to a file, or replay them from it
   * (HT-09): a path (mode `'auto'`: replay if the file exists, else record)
   * or {@link ServerCassetteOptions}. `SHIMKIT_CASSETTE_MODE` overrides the
   * mode. Recording needs `upstream`; a replay without the file is refused
   * here. The file is written at `dispose()`.
   * @default undefined (no cassette: only what the test scripts answers)
   * @example createMockServer({ cassette: { path: join(__dirname, 'chat.cassette.json'), upstream: 'https://api.openai.com' } })
   */
  cassette?: string | ServerCassetteOptions;
  /**
   * The longest a request waits for the test's thread — a function
   * response, a predicate, the `unmatched` function, a `hold()` — and the
   * longest a `stall` cut keeps its connection. Then it ends with a 500 (504
   * for a hold) whose text says that thread may be blocked.
   * @default 30000
   */
  timeoutMs?: number;
  /**
   * Requests with a bigger body are refused with 413 (by `content-length`
   * before the body is sent, or while a chunked body is read).
   * @default 67108864 (64 MiB)
   */
  bodyLimitBytes?: number;
  /**
   * How many bytes of each request body the log keeps (`body`); `bodyBytes`
   * counts the whole body (for one refused with 413: its `content-length`,
   * or the chunked bytes read when the limit was crossed).
   * @default 1048576 (1 MiB)
   */
  logBodyBytes?: number;
  /**
   * The request methods the FIFO (`enqueue()`) answers, in upper case, or
   * `'any'`. Health checks (`HEAD`) and CORS preflights (`OPTIONS`) do not
   * take a FIFO response meant for the program's real requests: with
   * nothing else for them they go to the `unmatched` policy. Expectations
   * are not limited: one with `method: 'HEAD'` takes HEAD requests.
   * @default ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']
   * @example createMockServer({ fifoMethods: 'any' }) // the FIFO answers HEAD and OPTIONS too
   */
  fifoMethods?: readonly string[] | 'any';
  /**
   * How many bytes of request bodies the log keeps in all. Past it, the
   * oldest entries lose their bodies (`body` empty, `bodyDropped: true`;
   * `bodyBytes` and the rest of the entry stay), so a long run keeps the
   * latest bodies within a bounded memory.
   * @default 268435456 (256 MiB)
   * @example createMockServer({ logBodyBytes: 64 * 1024, logBodyBudgetBytes: 16 * 1024 * 1024 })
   */
  logBodyBudgetBytes?: number;
  /**
   * Variables `env()` adds or changes: a value (`'{url}'` in it is the
   * server's URL), used as given, or `null` to leave out one of the defaults
   * (the variable is then as the base env has it, or absent). NO_PROXY and
   * no_proxy are two defaults: `{ NO_PROXY: null }` leaves NO_PROXY alone and
   * still adds loopback to no_proxy.
   * @example createMockServer({ env: { MY_API_BASE: '{url}/api', OPENAI_API_KEY: null } })
   */
  env?: Record<string, string | null>;
  /**
   * Serve only requests that carry this server's secret, `api.token` (a
   * random value made at start): as `authorization: Bearer <token>` (the
   * OpenAI SDKs) or `x-api-key: <token>` (the Anthropic SDKs). `env()` sets
   * `OPENAI_API_KEY` and `ANTHROPIC_API_KEY` to it, so a client run with
   * `env()` has it. Any other request gets a 401 whose body says why, is
   * logged with that `error`, and uses nothing scripted: on a shared host
   * another local user who finds the loopback port cannot claim the
   * test's responses.
   * @default false
   * @example
   * await using api = await createMockServer({ requireToken: true });
   * execFileSync('my-agent', [], { env: api.env() }); // its SDK sends api.token
   */
  requireToken?: boolean;
}

/** Options resolved; not exported from src/index.ts. */
export interface ServerSettings {
  strict: boolean;
  unmatched: 'fail' | 'echo' | UnmatchedHandler;
  unmatchedAdvice: string | undefined;
  listen: WireListen;
  timeoutMs: number;
  bodyLimitBytes: number;
  logBodyBytes: number;
  /** Upper case; undefined: any. */
  fifoMethods: string[] | undefined;
  logBodyBudgetBytes: number;
  env: Record<string, string | null>;
  cassette: CassetteSettings | undefined;
  requireToken: boolean;
}

const KEYS = [
  'requireToken',
  'strict',
  'unmatched',
  'unmatchedAdvice',
  'listen',
  'cassette',
  'timeoutMs',
  'bodyLimitBytes',
  'logBodyBytes',
  'fifoMethods',
  'logBodyBudgetBytes',
  'env',
];
/** What the FIFO answers unless told otherwise: the methods a scripted response makes sense for. */
export const FIFO_METHODS: readonly string[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const WHERE = 'createMockServer()';
const MAX_BYTES = 2 ** 32 - 1;

export function resolveServerOptions(options: MockServerOptions | undefined): ServerSettings {
  const o = checkOptionKeys(options, KEYS, WHERE);
  if (o.strict !== undefined && typeof o.strict !== 'boolean') {
    throw optionError(WHERE, 'strict', 'true or false', o.strict);
  }
  const unmatched = o.unmatched ?? 'fail';
  if (unmatched !== 'fail' && unmatched !== 'echo' && typeof unmatched !== 'function') {
    throw optionError(WHERE, 'unmatched', '"fail", "echo" or a function', unmatched);
  }
  if (o.strict && unmatched !== 'fail') {
    throw new InvalidOptionError(
      `The \`strict\` option of ${WHERE} needs \`unmatched: 'fail'\` (got ${describeValue(unmatched)}): under strict an unmatched request is a failure, which another policy would hide. Leave out one of the two.`,
    );
  }
  if (o.requireToken !== undefined && typeof o.requireToken !== 'boolean') {
    throw optionError(WHERE, 'requireToken', 'true or false', o.requireToken);
  }
  const bodyLimitBytes = bytes('bodyLimitBytes', o.bodyLimitBytes, 64 * 1024 * 1024, 1);
  const cassette = o.cassette === undefined ? undefined : resolveServerCassette(o.cassette, WHERE);
  if (o.requireToken === true && cassette !== undefined && cassette.mode !== 'replay') {
    throw new InvalidOptionError(
      `The \`requireToken\` option of ${WHERE} cannot go with a cassette that records (mode '${cassette.mode}'): the program's API key would be the server's token, and the upstream needs the real one. Record without requireToken (on a host of your own), then replay with it (mode: 'replay').`,
    );
  }
  return {
    strict: o.strict ?? false,
    unmatched,
    unmatchedAdvice: advice(o.unmatchedAdvice),
    listen: resolveListen(o.listen),
    timeoutMs: checkMs(WHERE, 'timeoutMs', o.timeoutMs, 30_000, 1),
    bodyLimitBytes,
    logBodyBytes: bytes('logBodyBytes', o.logBodyBytes, 1024 * 1024, 0),
    fifoMethods: fifoMethods(o.fifoMethods),
    logBodyBudgetBytes: bytes('logBodyBudgetBytes', o.logBodyBudgetBytes, 256 * 1024 * 1024, 0),
    env: resolveEnv(o.env),
    cassette,
    requireToken: o.requireToken ?? false,
  };
}

function fifoMethods(value: unknown): string[] | undefined {
  if (value === undefined) return [...FIFO_METHODS];
  if (value === 'any') return undefined;
  const shape = "'any' or a non-empty list of method names such as ['GET', 'POST']";
  if (!Array.isArray(value) || value.length === 0)
    throw optionError(WHERE, 'fifoMethods', shape, value);
  for (const method of value) {
    if (typeof method !== 'string' || !/^[A-Za-z]+$/.test(method))
      throw optionError(WHERE, 'fifoMethods', shape, value);
  }
  return [...new Set(value.map((method: string) => method.toUpperCase()))];
}

function advice(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '') {
    throw optionError(WHERE, 'unmatchedAdvice', 'a text that is not empty', value);
  }
  return value;
}

function bytes(option: string, value: unknown, fallback: number, min: 0 | 1): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > MAX_BYTES) {
    throw optionError(WHERE, option, `an integer of bytes from ${min} to ${MAX_BYTES}`, value);
  }
  return value;
}

function resolveListen(value: unknown): WireListen {
  if (value === undefined) return { kind: 'tcp', host: '127.0.0.1', port: 0 };
  const expected = '{ host?, port? } or { path } (an absolute Unix socket path)';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw optionError(WHERE, 'listen', expected, value);
  }
  if ('path' in value) {
    const { path, ...rest } = value as { path: unknown };
    if (Object.keys(rest).length > 0) {
      throw optionError(WHERE, 'listen', `${expected}, not both`, value);
    }
    if (typeof path !== 'string' || !posix.isAbsolute(path) || path.includes('\0')) {
      throw optionError(
        WHERE,
        'listen',
        'a { path } with an absolute socket path (in a dir made with mkdtemp)',
        value,
      );
    }
    const limit = process.platform === 'linux' ? 107 : 103;
    if (Buffer.byteLength(path) > limit) {
      throw new InvalidOptionError(
        `The \`listen\` socket path of ${WHERE} is ${Buffer.byteLength(path)} bytes; the limit on ${process.platform} is ${limit}: ${path}. Use a shorter dir (for example one made with mkdtemp under /tmp).`,
      );
    }
    return { kind: 'unix', path };
  }
  checkOptionKeys(value as object, ['host', 'port'], `${WHERE} \`listen\``);
  const { host = '127.0.0.1', port = 0 } = value as { host?: unknown; port?: unknown };
  if (typeof host !== 'string' || host === '')
    throw optionError(WHERE, 'listen.host', 'a host name or address', host);
  if (!Number.isInteger(port) || (port as number) < 0 || (port as number) > 65535) {
    throw optionError(
      WHERE,
      'listen.port',
      'an integer from 0 to 65535 (0 picks a free port)',
      port,
    );
  }
  return { kind: 'tcp', host, port: port as number };
}

function resolveEnv(value: unknown): Record<string, string | null> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw optionError(WHERE, 'env', 'an object of variable names to strings or null', value);
  }
  for (const [name, v] of Object.entries(value)) {
    if (name === '' || name.includes('=') || name.includes('\0')) {
      throw optionError(WHERE, 'env', 'an object whose keys are variable names (no "=")', name);
    }
    if (v !== null && typeof v !== 'string') {
      throw optionError(WHERE, `env.${name}`, 'a string or null', v);
    }
  }
  return { ...(value as Record<string, string | null>) };
}

// The mock server's cassettes (HT-09, docs/design/mock-server.md §8): the
// option that turns them on and the file they are kept in. Types only; both
// threads import them.
import type { SseEvent } from './types.js';

/** How a mock server uses its cassette. */
export type ServerCassetteMode = 'record' | 'replay' | 'auto' | 'record-missing';

/**
 * The `cassette` option of `createMockServer()` (a path alone is
 * `{ path, mode: 'auto' }`).
 *
 * - `record`: every request no expectation or FIFO entry takes is passed to
 *   `upstream`; its answer streams to the client as it comes (an SSE answer
 *   event by event) and is kept; `dispose()` writes the cassette.
 * - `replay`: each recorded interaction answers one request with the same
 *   method, path, query and body (JSON compared as values); any other request
 *   gets the `unmatched` answer (a 500 naming the cassette and the closest
 *   interaction). Under `strict`, an interaction not replayed fails
 *   `assertDone()`, as an unused expectation does.
 * - `auto`: `replay` if the file exists, else `record`.
 * - `record-missing`: replay what the file has, pass the rest to `upstream`
 *   and append it to the file.
 *
 * `SHIMKIT_CASSETTE_MODE` overrides `mode`, as for mock binaries, so CI can
 * replay what a developer recorded. Secrets are not written: the headers
 * `authorization`, `proxy-authorization`, `x-api-key`, `api-key`,
 * `x-goog-api-key`, `cookie`, `set-cookie`, the query value `code`, and
 * every header or query value whose name looks like a credential, in any
 * case: it contains KEY, TOKEN, SECRET, PASSWORD, AUTH, COOKIE, SESSION,
 * CREDENTIAL … (SECRET_KEY_PATTERN), or one of its parts (split at `-`, `_`,
 * `.` and case changes) is `sig`, `signature` or `hmac` — `X-Amz-Signature`,
 * `X-Goog-Signature`, `X-Amz-Credential`, `api_key`, `Access_Token`. They
 * are kept as `[redacted]` (a redacted query value matches any value on
 * replay). In a JSON request body, the value of every member, at any depth,
 * whose name has a part (split as above) `key`, `apikey`, `token`,
 * `accesstoken`, `refreshtoken`, `secret`, `clientsecret`, `password`,
 * `passwd`, `passphrase`, `pass`, `pwd`, `auth`, `authorization`,
 * `credential(s)` or `cookie` — `api_key`, `apiKey`, `access_token`,
 * `client_secret`, `auth` — or two parts `api keys`, `access tokens`,
 * `refresh tokens`, `auth tokens`, `secret keys`, `private keys` (`api_keys`,
 * `accessTokens`), is `[redacted]` in `json` and in `bodyBase64`
 * (which then holds the redacted JSON's bytes, not the ones sent); names
 * that are not credentials stay (`max_tokens`, `author`, `signature`).
 * On replay the request's JSON body is redacted the same way before it is
 * compared, so the recorded request matches whatever key it carries.
 * Other bodies are kept as they are. The file is written 0600, as every
 * file shimkit writes.
 *
 * Requests passed upstream are logged with `claimedBy:
 * 'cassette:<file>#<n>'` (`<file>` the base name, `<n>` the number the
 * interaction gets in the file; replayed ones carry the name of the
 * interaction that answered). A `hold()` never catches a request passed
 * upstream.
 *
 * @example
 * createMockServer({ cassette: { path: join(__dirname, 'chat.cassette.json'), upstream: 'https://api.openai.com' } })
 */
export interface ServerCassetteOptions {
  /**
   * The cassette file (JSON), an absolute path; its dir is created when the
   * file is written. Required (no default).
   * @example join(__dirname, 'cassettes', 'chat.json')
   */
  path: string;
  /**
   * `'record'`, `'replay'`, `'auto'` or `'record-missing'`;
   * `SHIMKIT_CASSETTE_MODE` wins over it.
   * @default 'auto'
   */
  mode?: ServerCassetteMode;
  /**
   * The base URL requests are passed to while recording (`record`,
   * `record-missing`, and `auto` without a file): `http:` or `https:`, no
   * credentials, query or fragment; a path in it is put before each
   * request's path (`http://host/base` + `/v1/x` → `/base/v1/x`). Needed
   * whenever the mode records; unused on replay.
   * @default undefined (nothing to record from: a mode that records is refused)
   * @example 'https://api.openai.com'
   */
  upstream?: string;
  /**
   * On replay, `'recorded'` sends each SSE event after the gap it came
   * after when recorded (the first one after the gap from the headers);
   * `'none'` sends them at once. The file keeps the timings either way.
   * @default 'none'
   */
  timing?: 'none' | 'recorded';
}

/** One recorded SSE event: the event, and when it came, in ms after the response's headers. */
export type RecordedSseEvent = SseEvent & { atMs: number };

/** A request as a cassette keeps it. */
export interface RecordedRequest {
  /** Upper-case, as sent. */
  method: string;
  /** The path without the query. */
  path: string;
  /** Query parameters (a repeated one joined with `,`); key-like ones `[redacted]`. */
  query: Record<string, string>;
  /** Lower-case names, as forwarded; secret ones `[redacted]`. */
  headers: Record<string, string>;
  /** The body's bytes (base64); a JSON body with a key in it: the redacted JSON's. */
  bodyBase64: string;
  /** The body as JSON (key-like members `[redacted]`), when it is JSON: a replay compares it as a value, not as bytes. */
  json?: unknown;
}

/** An answer as a cassette keeps it: its body as bytes, or as SSE events with their arrival times. */
export interface RecordedResponse {
  status: number;
  /** Lower-case names (a list for a repeated one), without hop-by-hop headers; secret ones `[redacted]`. */
  headers: Record<string, string | string[]>;
  /** The body's bytes (base64), unless `sse`. */
  bodyBase64?: string;
  /** The SSE events (a `text/event-stream` answer whose bytes shimkit writes back exactly). */
  sse?: RecordedSseEvent[];
}

/** One request and its answer. */
export interface CassetteInteraction {
  request: RecordedRequest;
  response: RecordedResponse;
  /** Milliseconds from passing the request on to the answer's last byte. */
  durationMs: number;
}

/** A mock server's cassette file. */
export interface ServerCassette {
  version: 1;
  kind: 'http';
  interactions: CassetteInteraction[];
}

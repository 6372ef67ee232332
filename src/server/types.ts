// The public vocabulary of createMockServer() (SPEC HT), and the checked,
// encoded form of a response that the serving thread receives. Responses
// are plain JSON data, like a mock binary's MockResponse, so the CLI and
// cassettes carry them as they are.

/** One Server-Sent Event. `data` that is not a string is sent as its JSON. */
export interface SseEvent {
  /** The `event:` line (Anthropic and the Responses API name every event; chat completions none). */
  event?: string;
  /**
   * The `data:` lines: a string (split on LF into one line each; no CR, which
   * no decoder gives back), or a value sent as its JSON. Left out only with no
   * `event`: a block of `comment`, `id` or `retry` alone, which decoders do
   * not dispatch (a keep-alive).
   */
  data?: unknown;
  /** The `id:` line. */
  id?: string;
  /** The `retry:` line (milliseconds). */
  retry?: number;
  /** A `: comment` line before the event's fields (a keep-alive when alone with `data: ''`… or use `comment` only). */
  comment?: string;
}

/** How a response is cut short, at an exact point. */
export interface ResponseCut {
  /** Cut after this many SSE events were written (0: right after the headers, which are flushed first). */
  afterEvents?: number;
  /** Cut after this many body bytes (the event or chunk that crosses it is split). */
  afterBytes?: number;
  /** `'fin'`: end the connection without the last chunk (curl exit 18); `'rst'`: reset it (curl 56, TCP only); `'stall'`: stop writing and keep it open. */
  how: 'fin' | 'rst' | 'stall';
}

/** One piece of a body sent as separate writes. */
export interface ResponseChunk {
  /** The piece as text (UTF-8) … */
  text?: string;
  /** … or as base64 bytes. */
  base64?: string;
  /** Milliseconds before this piece is written. @default 0 */
  delayMs?: number;
}

/**
 * A scripted HTTP response (HT-02), as plain JSON data. At most one body
 * kind: `json`, `text`, `bodyBase64`, `sse` or `chunks` (none: an empty
 * body); `wireBase64` instead sends those exact bytes as the whole answer
 * (status line and headers too), for malformed framing.
 */
export interface MockServerResponse {
  /** @default 200 */
  status?: number;
  /** Response headers (a list for a repeated header). `content-type` has a default per body kind. */
  headers?: Record<string, string | string[]>;
  /** A JSON body (`content-type: application/json`). */
  json?: unknown;
  /** A text body (`content-type: text/plain; charset=utf-8`). */
  text?: string;
  /** A body of these bytes (base64). */
  bodyBase64?: string;
  /** An SSE stream (`content-type: text/event-stream`), sent chunked, one write per event. */
  sse?: SseEvent[];
  /** A body sent as separate writes (chunked). */
  chunks?: ResponseChunk[];
  /** The whole answer's bytes (base64), status line and headers included: nothing else is added. */
  wireBase64?: string;
  /** Milliseconds before the status line. @default 0 */
  delayMs?: number;
  /** Milliseconds before each SSE event after the first. @default 0 */
  eventDelayMs?: number;
  /** Cut the response at an exact event or byte. */
  cut?: ResponseCut;
  /** Reset the connection before any byte of the answer (clients see ECONNRESET). */
  resetBeforeHeaders?: boolean;
  /**
   * How many requests this response answers: a count from 1 to 1000000, or
   * `'always'` (every request it fits; never used up), as a mock binary's
   * `MockResponse.times`.
   * @default 1
   */
  times?: number | 'always';
  /** `assertDone()` does not ask for it to have been used. @default false */
  optional?: boolean;
  /**
   * A client that leaves before the last byte of this response was written
   * (during `delayMs`, a hold, or mid-stream; by FIN or RST) gives it back:
   * the use goes back to its expectation's remaining times, or to its place
   * in the FIFO, so the client's retry gets it. The aborted request's log
   * entry says `endedBy: 'client-abort'` and `requeued: true`. Without it a
   * response is used once claimed, and the retry takes the next one. A
   * response written whole is never given back. (A retry that reaches the
   * server before it saw the client leave is claimed first, as any other
   * request; the SDKs wait half a second or more before they retry.)
   * @default false
   * @example
   * api.enqueue({ ...sse.chat('ok'), delayMs: 2000, retryable: true }); // the SDK times out, retries, and gets it
   */
  retryable?: boolean;
}

/** A value that matches anything present (`headers`, `query`, `json`). */
export interface AnyValue {
  readonly any: true;
}

/** Which requests an expectation or a hold takes; every part given must fit. */
export interface RequestMatch {
  /** A method in any case (`'post'` fits POST), a RegExp tested on the upper-case method (`/^(GET|HEAD)$/`), or `any()`. */
  method?: string | RegExp | AnyValue;
  /** The path without the query: exact, a RegExp, or `any()`. */
  path?: string | RegExp | AnyValue;
  /** Query parameters: each named one must be there and fit. */
  query?: Record<string, string | RegExp | AnyValue>;
  /** Headers (names in any case): each named one must be there and fit. */
  headers?: Record<string, string | RegExp | AnyValue>;
  /**
   * The JSON body contains this: objects by key, recursively; arrays element
   * by element, same length. The body is decoded as UTF-8 first, each
   * invalid sequence becoming U+FFFD (as `Buffer#toString()` does), so
   * `'a\uFFFDb'` fits `a`, any bad byte, `b`, and bodies that differ only in
   * bad bytes fit alike; to tell those apart, compare the bytes in a
   * `predicate` (`r.body.equals(bytes)`).
   */
  json?: unknown;
  /** Runs on the test's thread: a request it must decide waits for that thread (HT-04). */
  predicate?: (request: LoggedRequest) => boolean;
}

/** How the response to a logged request went. */
export interface LoggedResponse {
  /** undefined until the status line is written (or when it never was). */
  status: number | undefined;
  /** Body bytes written. */
  bytesSent: number;
  /** SSE events written. */
  events: number;
  /** `'complete'`, `'cut'` (a scripted cut), `'client-abort'` (the client left first); undefined while it runs. */
  endedBy: 'complete' | 'cut' | 'client-abort' | undefined;
  /** `Date.now()` when the status line was written (undefined before, or when it never was). */
  startedAt?: number;
  /** `Date.now()` when its last byte was written (or the connection ended first). */
  endedAt?: number;
  /** The client left first and the response, `retryable`, was given back for its retry (so it does not count as used). */
  requeued?: boolean;
}

/** One request the server received (HT-07). */
export interface LoggedRequest {
  /** 1-based, in arrival order. */
  seq: number;
  method: string;
  path: string;
  query: Record<string, string>;
  /** Lower-case names; a repeated header joined with `, `. */
  headers: Record<string, string>;
  /** The body's first `logBodyBytes` bytes. */
  body: Buffer;
  /**
   * The body's length, also past what `body` keeps (`body.length <
   * bodyBytes`: it was cut at `logBodyBytes`). For a body refused with 413
   * it is the declared `content-length`, or for a chunked body the bytes
   * read when the limit was crossed (the rest is not read).
   */
  bodyBytes: number;
  /**
   * `true` when the log dropped this body to stay within
   * `logBodyBudgetBytes` (older bodies go first): `body` is then empty and
   * `json` undefined; `bodyBytes` still counts it. Absent otherwise.
   */
  bodyDropped?: true;
  /** The body parsed as JSON (decoded as UTF-8, an invalid sequence as U+FFFD), or undefined if it is not JSON. */
  json: unknown;
  /** `Date.now()` when its headers were in. */
  receivedAt: number;
  /** The expectation's name (or `expect#<n>`), `fifo#<n>`, `cassette:<file>#<n>`, or null (unmatched). */
  claimedBy: string | null;
  /** What went wrong with it, if anything: unmatched, malformed (400), too large (413), a timeout. */
  error: string | undefined;
  response: LoggedResponse;
}

/** A response computed from the request, on the test's thread (HT-04: it needs that thread's event loop). */
export type ResponseHandler = (
  request: LoggedRequest,
) => MockServerResponse | Promise<MockServerResponse>;

/** A response checked and encoded once, as the serving thread writes it (structured-clone safe); not part of the public API (src/index.ts does not export it). */
export interface WireHttpResponse {
  status: number;
  /** In order; a repeated header is several entries. Lower-case names. */
  headers: Array<[string, string]>;
  /** `body`: one piece with `content-length`; `sse` and `chunks`: chunked, one write per piece; `wire`: the raw bytes. */
  kind: 'body' | 'sse' | 'chunks' | 'wire';
  pieces: Uint8Array[];
  /** Milliseconds before each piece (the first's too: 0 for SSE). */
  gaps: number[];
  delayMs: number;
  cut: ResponseCut | undefined;
  resetBeforeHeaders: boolean;
  /** `Infinity` for `'always'`. */
  times: number;
  optional: boolean;
  retryable: boolean;
}

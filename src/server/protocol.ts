// The messages between the test's thread and the server's worker thread
// (docs/design/mock-server.md §4). Everything here is structured-clone data:
// a RegExp travels as { regex, flags }, any() as { any: true }, a function as
// the id under which the test's thread keeps it. Both sides import this file;
// it holds types only.
import type { WireMatcher } from '../internal/matcher.js';
import type { CassetteInteraction } from './cassette-format.js';
import type { WirePlaybook } from './playbook/wire.js';
import type { LoggedResponse, WireHttpResponse } from './types.js';

/** A matcher value: exactly this string, a pattern, or anything present (src/internal/matcher.ts). */
export type WireValue = WireMatcher;

/** A RequestMatch as the worker tests it. */
export interface WireRequestMatch {
  /** A string upper-case; a pattern is tested on the upper-case method. */
  method?: WireValue;
  path?: WireValue;
  query?: Record<string, WireValue>;
  /** Lower-case names. */
  headers?: Record<string, WireValue>;
  /** Whether `json` was given (it may be `null`). */
  hasJson?: boolean;
  json?: unknown;
  /** The id of the predicate the test's thread keeps. */
  predicate?: number;
  /** A cassette's recorded request (replay): its exact query and body. */
  recorded?: WireRecordedMatch;
}

/**
 * What a replayed interaction asks of a request beside method and path: the
 * query has exactly these names, each with this value (`[redacted]`: any
 * value), and the body is this JSON value (compared as a value) or these bytes.
 */
export interface WireRecordedMatch {
  query: Record<string, string>;
  body: { json: unknown } | { bytes: Uint8Array };
}

/** The cassette, as the worker uses it (HT-09). */
export interface WireCassette {
  /** The file, absolute (for messages). */
  path: string;
  /** Its base name, as `cassette:<file>#<n>` names interactions. */
  file: string;
  mode: 'record' | 'replay' | 'record-missing';
  /** Where requests no script entry takes go (record, record-missing); undefined on replay. */
  upstream: string | undefined;
  /** How many interactions the file has now (replayed, and numbered before new ones). */
  recorded: number;
}

/** What answers a claimed request: data, or a function the test's thread runs. */
export type WireAnswer = { wire: WireHttpResponse } | { handler: number };

/** Where the server listens, checked. */
export type WireListen =
  | { kind: 'tcp'; host: string; port: number }
  | { kind: 'unix'; path: string };

/** What the worker is started with (`workerData`, beside the two ports). */
export interface WorkerSettings {
  listen: WireListen;
  timeoutMs: number;
  bodyLimitBytes: number;
  logBodyBytes: number;
  /** The methods the FIFO answers (upper case); undefined: any. */
  fifoMethods: string[] | undefined;
  unmatched: 'fail' | 'echo' | 'function';
  /** `unmatchedAdvice`, when given. */
  unmatchedAdvice?: string;
  cassette?: WireCassette;
  /** `requireToken`: the secret every request must carry (checked before any claim). */
  token?: string;
}

/** Which script entry claimed a request. */
export type WireClaim = { expect: number } | { fifo: number } | { playbook: number } | null;

/** A log entry as the worker posts it. */
export interface WireEntry extends LoggedResponse {
  seq: number;
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: Uint8Array;
  bodyBytes: number;
  receivedAt: number;
  claimedBy: string | null;
  claim: WireClaim;
  error: string | undefined;
  /** No expectation nor FIFO entry took it (the `unmatched` policy answered). */
  unmatched: boolean;
  /** The hold that caught it, if one did. */
  hold: number | undefined;
  startedAt: number | undefined;
  endedAt: number | undefined;
}

/** The parts of an entry that change after it was posted. */
export type EntryPatch = Partial<
  Pick<
    WireEntry,
    'status' | 'bytesSent' | 'events' | 'endedBy' | 'error' | 'startedAt' | 'endedAt' | 'requeued'
  >
>;

/** Test's thread → worker. `gen` is the script generation (`reset()` starts a new one). */
export type ControlMessage =
  | {
      type: 'expect';
      gen: number;
      id: number;
      name: string;
      match: WireRequestMatch;
      answer: WireAnswer;
      times: number;
    }
  | {
      type: 'enqueue';
      gen: number;
      entries: Array<{ index: number; answer: WireAnswer; times: number }>;
    }
  | {
      type: 'hold';
      gen: number;
      id: number;
      match: WireRequestMatch | undefined;
      afterEvents: number | undefined;
    }
  /** PB: a playbook, in its place among the expectations. */
  | { type: 'playbook'; gen: number; playbook: WirePlaybook }
  | { type: 'release'; gen: number; id: number; response: WireHttpResponse | undefined }
  /**
   * How far the test's thread got with the function of question `ask`: it
   * `began` it, and its synchronous part `returned` (a timeout's text then
   * blames the function, not a blocked thread).
   */
  | { type: 'asked'; ask: number; stage: 'began' | 'returned' }
  | { type: 'answer'; ask: number; ok: true; value: AskValue }
  | { type: 'answer'; ask: number; ok: false; error: string }
  | { type: 'reset'; gen: number }
  | { type: 'dispose' }
  /**
   * A read of the log settles (requests(), assertDone()): after two turns of
   * its loop (so a FIN or RST the kernel already has is seen) the worker
   * posts what is pending, then stores `n` in `flag[0]` and notifies it.
   */
  | { type: 'sync'; flag: Int32Array; n: number }
  /** @internal A test of the crash path: the worker throws from a timer. */
  | { type: 'crash' };

/**
 * What a question to the test's thread is about: a predicate's verdict, a
 * function response's content, the `unmatched` function's response, a
 * playbook's `.then()` (answered `true` once it ran), a playbook's
 * late-bound params (answered with the params).
 */
export type AskKind = 'predicate' | 'handler' | 'unmatched' | 'then' | 'params';

/** What the test's thread answers: a verdict, a response, or a playbook's params. */
export type AskValue = boolean | WireHttpResponse | { params: Record<string, unknown> };

/** Worker → test's thread. */
export type ServerEvent =
  | { type: 'listening'; url: string; socketPath: string | undefined }
  | { type: 'listen-error'; address: string; errno: string | undefined; message: string }
  /**
   * A request's log entry; `news`: what the playbook that took it did, in
   * the same message, as the JSON of a PlaybookNews[] (a string crosses
   * threads for a fraction of what a structured clone of its objects costs
   * the serving thread).
   */
  | { type: 'entry'; gen: number; entry: WireEntry; news?: { id: number; json: string } }
  | { type: 'update'; gen: number; seq: number; patch: EntryPatch }
  | {
      type: 'held';
      gen: number;
      id: number;
      seq: number;
      stage: 'received' | 'blocked';
      /** Why a replacement given to release() cannot follow the held response's headers (a hold with `afterEvents` on a body sent with content-length, or on one with no body). */
      fixed?: string;
    }
  | {
      type: 'ask';
      gen: number;
      ask: number;
      kind: AskKind;
      /** The predicate's or the handler's id (0 for the unmatched function). */
      target: number;
      /** The expectation it belongs to, for messages. */
      label: string;
      request: WireEntry;
      /** A `.then()`'s tool result (a ToolResultRecord). */
      detail?: unknown;
    }
  /** The worker stopped waiting for question `ask`: if it has not begun, it is not run. */
  | { type: 'ask-dropped'; gen: number; ask: number }
  /** PB: what playbook `id` did since its last news (the JSON of a PlaybookNews[]). */
  | { type: 'playbook'; gen: number; id: number; json: string }
  /** A request passed upstream and answered whole: interaction `n` of the cassette (redacted). */
  | { type: 'recorded'; n: number; interaction: CassetteInteraction }
  | { type: 'disposed' };

import type { EntryPatch, WireEntry } from './protocol.js';
import type { LoggedRequest, LoggedResponse } from './types.js';

/** A log entry of the mirror: the request, and how the worker's updates reach it. */
export interface LiveRequest {
  request: LoggedRequest;
  /** Apply an update of the worker (its `response` fields and `error`). */
  patch(patch: EntryPatch): void;
}

/**
 * A log entry on the test's thread (HT-07), made from the worker's
 * WireEntry. `json` is parsed from `body` on first read (undefined when the
 * body is not JSON, or was cut at `logBodyBytes`). Without `sync` it is a
 * snapshot (what a predicate or a function response is given).
 */
export function loggedRequest(entry: WireEntry): LoggedRequest {
  return liveRequest(entry, undefined).request;
}

/**
 * A log entry whose `response` and `error` change as the worker's updates
 * come: each read of them calls `sync` first (the mirror's read of the
 * journal), so a request held on to is exact whenever it is read, as
 * `requests()` is, though the worker does not wake this thread per update
 * (decision 009 "As built"). They are enumerable accessors of the objects
 * themselves, so the objects compare, spread and print as plain data; a key
 * the entry does not have yet (`startedAt`, `endedAt`) appears when it is set.
 */
export function liveRequest(entry: WireEntry, sync: (() => void) | undefined): LiveRequest {
  const body = Buffer.from(entry.body.buffer, entry.body.byteOffset, entry.body.byteLength);
  /** The fields that change: `response`'s and `error`. */
  const state: Record<string, unknown> = {
    status: entry.status,
    bytesSent: entry.bytesSent,
    events: entry.events,
    endedBy: entry.endedBy,
    error: entry.error,
  };
  const response = {} as LoggedResponse;
  const request = {
    seq: entry.seq,
    method: entry.method,
    path: entry.path,
    query: entry.query,
    headers: entry.headers,
    body,
    bodyBytes: entry.bodyBytes,
    receivedAt: entry.receivedAt,
    claimedBy: entry.claimedBy,
    error: entry.error,
    response,
  } as LoggedRequest;
  const field = (target: object, key: string) => {
    if (sync === undefined) {
      Object.defineProperty(target, key, { value: state[key], enumerable: true, writable: true });
      return;
    }
    Object.defineProperty(target, key, {
      enumerable: true,
      configurable: true,
      get() {
        sync();
        return state[key];
      },
      set(value) {
        state[key] = value;
      },
    });
  };
  for (const key of ['status', 'bytesSent', 'events', 'endedBy'] as const) field(response, key);
  if (entry.startedAt !== undefined) state.startedAt = entry.startedAt;
  if (entry.endedAt !== undefined) state.endedAt = entry.endedAt;
  if (state.startedAt !== undefined) field(response, 'startedAt');
  if (state.endedAt !== undefined) field(response, 'endedAt');
  field(request, 'error');
  let parsed: { value: unknown } | undefined;
  Object.defineProperty(request, 'json', {
    enumerable: true,
    get() {
      if (!parsed) {
        try {
          parsed = { value: body.length === 0 ? undefined : JSON.parse(body.toString('utf8')) };
        } catch {
          parsed = { value: undefined };
        }
      }
      return parsed.value;
    },
  });
  const patch = (update: EntryPatch) => {
    for (const [key, value] of Object.entries(update)) {
      const had = key === 'error' || Object.hasOwn(response, key);
      state[key] = value;
      if (!had) field(response, key);
    }
  };
  return { request, patch };
}

/** `#3 POST /v1/chat/completions → 'plan', 200, complete` */
export function formatRequest(request: LoggedRequest): string {
  const by = request.claimedBy === null ? 'unmatched' : `'${request.claimedBy}'`;
  const { status, endedBy } = request.response;
  const what = request.method === '' ? '(malformed HTTP)' : `${request.method} ${request.path}`;
  return `#${request.seq} ${what} → ${by}, ${status ?? 'no status'}, ${endedBy ?? 'in progress'}`;
}

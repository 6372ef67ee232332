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

/** The state behind one live entry's accessors (a non-enumerable symbol-keyed slot). */
interface LiveState {
  /** `response`'s fields and `error`. */
  fields: Record<string, unknown>;
  sync: (() => void) | undefined;
  body: Buffer;
  parsed: { value: unknown } | undefined;
}

const STATE = Symbol('shimkit live entry');

/** A field of `response` (or `request.error`): read after `sync`. */
function fieldDescriptor(key: string): PropertyDescriptor {
  return {
    enumerable: true,
    configurable: true,
    get(this: { [STATE]: LiveState }) {
      const state = this[STATE];
      state.sync?.();
      return state.fields[key];
    },
    set(this: { [STATE]: LiveState }, value: unknown) {
      this[STATE].fields[key] = value;
    },
  };
}

/** One set of accessors for every entry: defining them makes no functions per entry. */
const RESPONSE_FIELDS: PropertyDescriptorMap = {
  status: fieldDescriptor('status'),
  bytesSent: fieldDescriptor('bytesSent'),
  events: fieldDescriptor('events'),
  endedBy: fieldDescriptor('endedBy'),
};
const LATER_FIELDS: Record<string, PropertyDescriptor> = {
  startedAt: fieldDescriptor('startedAt'),
  endedAt: fieldDescriptor('endedAt'),
  requeued: fieldDescriptor('requeued'),
};
const REQUEST_FIELDS: PropertyDescriptorMap = {
  error: fieldDescriptor('error'),
  json: {
    enumerable: true,
    get(this: { [STATE]: LiveState }) {
      const state = this[STATE];
      if (!state.parsed) {
        const { body } = state;
        try {
          state.parsed = {
            value: body.length === 0 ? undefined : JSON.parse(body.toString('utf8')),
          };
        } catch {
          state.parsed = { value: undefined };
        }
      }
      return state.parsed.value;
    },
  },
};

/**
 * A log entry whose `response` and `error` change as the worker's updates
 * come: each read of them calls `sync` first (the mirror's read of the
 * journal), so a request held on to is exact whenever it is read, as
 * `requests()` is, though the worker does not wake this thread per update
 * (decision 009 "As built"). They are enumerable accessors of the objects
 * themselves, so the objects compare, spread and print as plain data; a key
 * the entry does not have yet (`startedAt`, `endedAt`) appears when it is set.
 * Without `sync` the fields never change (a snapshot).
 */
export function liveRequest(entry: WireEntry, sync: (() => void) | undefined): LiveRequest {
  const body = Buffer.from(entry.body.buffer, entry.body.byteOffset, entry.body.byteLength);
  const fields: Record<string, unknown> = {
    status: entry.status,
    bytesSent: entry.bytesSent,
    events: entry.events,
    endedBy: entry.endedBy,
    error: entry.error,
  };
  const state: LiveState = { fields, sync, body, parsed: undefined };
  const response = {} as LoggedResponse;
  Object.defineProperty(response, STATE, { value: state });
  Object.defineProperties(response, RESPONSE_FIELDS);
  for (const key of ['startedAt', 'endedAt', 'requeued'] as const) {
    const value = entry[key];
    if (value === undefined) continue;
    fields[key] = value;
    Object.defineProperty(response, key, LATER_FIELDS[key] as PropertyDescriptor);
  }
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
  Object.defineProperty(request, STATE, { value: state });
  Object.defineProperties(request, REQUEST_FIELDS);
  const patch = (update: EntryPatch) => {
    for (const [key, value] of Object.entries(update)) {
      fields[key] = value;
      const later = LATER_FIELDS[key];
      if (later !== undefined && !Object.hasOwn(response, key)) {
        Object.defineProperty(response, key, later);
      }
    }
  };
  return { request, patch };
}

const NO_BODY = Buffer.alloc(0);

/** Drop an entry's body (the log's body budget): `body` empty, `json` undefined, `bodyBytes` kept. */
export function dropBody(request: LoggedRequest): void {
  request.body = NO_BODY;
  request.bodyDropped = true;
  const state = (request as unknown as { [STATE]?: LiveState })[STATE];
  if (state) {
    state.body = NO_BODY;
    state.parsed = undefined;
  }
}

/** `#3 POST /v1/chat/completions → 'plan', 200, complete` */
export function formatRequest(request: LoggedRequest): string {
  const by = request.claimedBy === null ? 'unmatched' : `'${request.claimedBy}'`;
  const { status, endedBy } = request.response;
  const what = request.method === '' ? '(malformed HTTP)' : `${request.method} ${request.path}`;
  return `#${request.seq} ${what} → ${by}, ${status ?? 'no status'}, ${endedBy ?? 'in progress'}`;
}

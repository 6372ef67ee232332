import type { WireEntry } from './protocol.js';
import type { LoggedRequest, LoggedResponse } from './types.js';

/**
 * A log entry on the test's thread (HT-07), made from the worker's
 * WireEntry. `json` is parsed from `body` on first read (undefined when the
 * body is not JSON, or was cut at `logBodyBytes`); `response` changes as the
 * worker posts its progress and end.
 */
export function loggedRequest(entry: WireEntry): LoggedRequest {
  const body = Buffer.from(entry.body.buffer, entry.body.byteOffset, entry.body.byteLength);
  const response: LoggedResponse = {
    status: entry.status,
    bytesSent: entry.bytesSent,
    events: entry.events,
    endedBy: entry.endedBy,
  };
  if (entry.startedAt !== undefined) response.startedAt = entry.startedAt;
  if (entry.endedAt !== undefined) response.endedAt = entry.endedAt;
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
  return request;
}

/** `#3 POST /v1/chat/completions → 'plan', 200, complete` */
export function formatRequest(request: LoggedRequest): string {
  const by = request.claimedBy === null ? 'unmatched' : `'${request.claimedBy}'`;
  const { status, endedBy } = request.response;
  const what = request.method === '' ? '(malformed HTTP)' : `${request.method} ${request.path}`;
  return `#${request.seq} ${what} → ${by}, ${status ?? 'no status'}, ${endedBy ?? 'in progress'}`;
}

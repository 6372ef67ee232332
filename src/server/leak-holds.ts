// What an undisposed mock server still holds, for the leak sanitizer
// (LK-02), from what the test's thread knows at once: the mirror of the log
// and script (the journal read synchronously, no round trip to the worker),
// the connection gauge the worker keeps in shared memory, and on Linux the
// kernel's socket queues (unread.ts). Every part is caught (holdLines()).
import { counted, holdLines, secondsText, sizeText } from '../internal/leak-lines.js';
import type { Mirror } from './mirror.js';
import type { LoggedRequest } from './types.js';
import { unreadByClients } from './unread.js';

/** Requests or entries listed by name before `… and N more`. */
const LISTED = 5;

/** What the leak report reads of a server. */
export interface ServerLeakView {
  mirror: Mirror;
  /** Apply the worker's events so far (a synchronous read of the journal). */
  drain(): void;
  openConnections(): number;
  /** The TCP port it listens on; undefined on a Unix socket. */
  port: number | undefined;
}

/**
 * The lines, e.g.
 *   1 held request: POST /v1/chat/completions (held 2.0 s)
 *   3 client connections open
 *   1 response still streaming: POST /v1/responses (12 events, 1.1 KiB sent)
 *   1.2 KiB written to clients and not read by them
 *   2 scripted responses never used: expectation 'plan', fifo#1
 */
export function serverLeakHolds(view: ServerLeakView): string[] {
  const { mirror } = view;
  let open = 0;
  return holdLines({
    'its log': () => {
      view.drain();
      return undefined;
    },
    'its holds': () => heldRequests(mirror),
    'its connections': () => {
      open = view.openConnections();
      return open > 0 ? `${counted(open, 'client connection')} open` : undefined;
    },
    'its responses in progress': () => streaming(mirror),
    'what clients did not read': () => {
      if (open === 0 || view.port === undefined) return undefined;
      const bytes = unreadByClients(view.port);
      return bytes ? `${sizeText(bytes)} written to clients and not read by them` : undefined;
    },
    'its script': () => neverUsed(mirror),
  });
}

function what(request: LoggedRequest): string {
  return request.method === ''
    ? `#${request.seq} (malformed HTTP)`
    : `${request.method} ${request.path}`;
}

function listed(items: string[]): string {
  const more = items.length > LISTED ? ` … and ${items.length - LISTED} more` : '';
  return `${items.slice(0, LISTED).join('; ')}${more}`;
}

/** Held requests whose response the test never released (and that did not end otherwise). */
function heldRequests(mirror: Mirror): string | undefined {
  const now = Date.now();
  const held: string[] = [];
  for (const hold of mirror.holds.values()) {
    const request = hold.request;
    if (hold.released || request === undefined || request.response.endedAt !== undefined) continue;
    const point = hold.stage === 'blocked' ? 'held' : 'caught';
    held.push(`${what(request)} (${point} ${secondsText(now - request.receivedAt)})`);
  }
  return held.length === 0 ? undefined : `${counted(held.length, 'held request')}: ${listed(held)}`;
}

/** Responses still being written that no hold stops (a long SSE stream, a stall). */
function streaming(mirror: Mirror): string | undefined {
  if (mirror.unfinished === 0) return undefined;
  const held = new Set<LoggedRequest>();
  for (const hold of mirror.holds.values())
    if (hold.request && !hold.released) held.add(hold.request);
  const running: string[] = [];
  for (const request of mirror.entries) {
    const response = request.response;
    if (response.endedAt !== undefined || held.has(request)) continue;
    const events = response.events > 0 ? `${counted(response.events, 'event')}, ` : '';
    running.push(`${what(request)} (${events}${sizeText(response.bytesSent)} sent)`);
  }
  if (running.length === 0) return undefined;
  return `${counted(running.length, 'response')} still in progress: ${listed(running)}`;
}

/** Expectations and FIFO entries never used (optional ones left out). */
function neverUsed(mirror: Mirror): string | undefined {
  const unused: string[] = [];
  for (const e of mirror.expectations.values()) {
    if (e.used === 0 && !e.optional) unused.push(`expectation '${e.name}'`);
  }
  for (const f of mirror.fifo) if (f.used === 0 && !f.optional) unused.push(`fifo#${f.index}`);
  if (unused.length === 0) return undefined;
  return `${counted(unused.length, 'scripted response')} never used: ${unused.slice(0, LISTED).join(', ')}${unused.length > LISTED ? ` … and ${unused.length - LISTED} more` : ''}`;
}

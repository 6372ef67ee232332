import type { OutgoingHttpHeaders } from 'node:http';
import type { EntryPatch } from '../protocol.js';
import type { WireHttpResponse } from '../types.js';
import { cutNow, resetNow } from './cut.js';
import type { Exchange } from './exchange.js';
import type { HoldOutcome } from './holds.js';
import { pause, writeStream } from './stream.js';
import { errorResponse } from './unmatched.js';
import { writeWire } from './wire.js';

/** Above this a json/text/bodyBase64 body goes as several writes (each counted when written). */
const BODY_SLICE = 64 * 1024;

/**
 * Serving one claimed response (design §5): a hold without `afterEvents`
 * pauses first; then, on a connection with pipelined requests, the
 * response waits until the ones before it finished (Node hands it the
 * socket), so its status, counters, cut or reset are what the client gets
 * in its turn; then `delayMs`, `resetBeforeHeaders`, the status and
 * headers (flushed for a chunked body, and before a cut or a hold, so a cut
 * after 0 events or bytes comes right after them), then the body by kind.
 * The status is posted to the log before the status line is written: at
 * once when it is flushed, else with the end of a body written in one
 * `end()` (status line, headers and body in one write, as a plain
 * `node:http` server writes them). A response that has no body on the wire
 * (to HEAD, a 204 or a 304) writes none and counts none.
 */
export async function serve(x: Exchange, first: WireHttpResponse, error?: string): Promise<void> {
  if (x.closed) return;
  let response = first;
  const hold = x.hold;
  if (hold && hold.afterEvents === undefined) {
    x.hold = undefined;
    const outcome = await pause(x, hold);
    if (x.closed) return;
    if (outcome.kind !== 'released') return heldEnd(x, outcome);
    if (outcome.response) x.replaced = true;
    response = outcome.response ?? response;
  }
  // A pipelined request waits for the responses before it: its own is logged as it goes on the wire.
  if (!x.res.socket && !(await x.onWire())) return;
  if (response.delayMs > 0 && !(await x.wait(response.delayMs))) return;
  if (response.resetBeforeHeaders) return resetNow(x);
  if (response.kind === 'wire') return writeWire(x, response);
  const bodyless = hasNoBody(x.req.method, response.status);
  writeHead(x, response, error);
  if (response.kind !== 'body' && !bodyless) return writeStream(x, response, heldEnd);
  return writeBody(x, response, bodyless);
}

/**
 * Serve now, synchronously, a response that waits for nothing — a body of
 * one write, without a hold, a delay, a reset or a cut, on a connection it
 * has to itself: the common case — and say whether it did (else `serve()`
 * it). No promise, no turn in between.
 */
export function serveNow(x: Exchange, response: WireHttpResponse, error?: string): boolean {
  if (
    x.closed ||
    x.hold !== undefined ||
    response.kind !== 'body' ||
    response.delayMs > 0 ||
    response.resetBeforeHeaders ||
    response.cut !== undefined ||
    !x.res.socket
  ) {
    return false;
  }
  const piece = response.pieces[0];
  if (piece !== undefined && piece.length > BODY_SLICE) return false;
  const bodyless = hasNoBody(x.req.method, response.status);
  writeHead(x, response, error);
  const body = bodyless || piece === undefined ? NO_BODY : piece;
  x.bytesSent = body.length;
  x.end('complete');
  x.endWith(body);
  return true;
}

const NO_BODY = new Uint8Array(0);

/** What Node sends no body for: a HEAD request's answer, 204, 304. */
function hasNoBody(method: string | undefined, status: number): boolean {
  return method === 'HEAD' || status === 204 || status === 304;
}

/**
 * Why nothing but the scripted body can follow the headers of `response`
 * (so a hold with `afterEvents` cannot take a replacement from release()),
 * or undefined when more body can follow (sse, chunks).
 */
export function fixedBody(
  method: string | undefined,
  response: WireHttpResponse,
): string | undefined {
  if (response.kind === 'wire' || response.resetBeforeHeaders) return undefined;
  if (method === 'HEAD') return 'it answers a HEAD request, which has no body';
  if (hasNoBody(method, response.status)) return `its status ${response.status} has no body`;
  if (response.kind !== 'body') return undefined;
  const length = headersOf(response)['content-length'];
  return length === undefined
    ? 'its body is json, text or bodyBase64, which is sent whole'
    : `its body is json, text or bodyBase64, and the headers already sent say content-length: ${String(length)}`;
}

/**
 * The response's headers as `writeHead()` takes them: a body's
 * `content-length` added; to a HEAD request a chunked body's
 * `transfer-encoding: chunked` too (the headers a GET would get, which
 * Node leaves out; without them a client cannot keep the connection).
 */
export function headersOf(response: WireHttpResponse, head = false): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of response.headers) {
    const had = headers[name];
    headers[name] =
      had === undefined ? value : [...(Array.isArray(had) ? had : [String(had)]), value];
  }
  if (
    response.kind === 'body' &&
    response.status !== 204 &&
    headers['content-length'] === undefined &&
    !headers['transfer-encoding']
  ) {
    headers['content-length'] = String(response.pieces[0]?.length ?? 0);
  }
  if (
    head &&
    response.kind !== 'body' &&
    headers['content-length'] === undefined &&
    headers['transfer-encoding'] === undefined
  ) {
    headers['transfer-encoding'] = 'chunked';
  }
  return headers;
}

function writeHead(x: Exchange, response: WireHttpResponse, error: string | undefined): void {
  const headers = headersOf(response, x.req.method === 'HEAD');
  const head: EntryPatch =
    error === undefined
      ? { status: response.status, startedAt: Date.now() }
      : { status: response.status, startedAt: Date.now(), error };
  if (/\bclose\b/i.test(String(headers.connection ?? ''))) x.endsConnection();
  x.res.writeHead(response.status, headers);
  if (response.kind === 'body' && x.hold?.afterEvents === undefined && !response.cut) {
    // Nothing is written before the body's one end(), and its end is posted before that.
    x.headed(head);
    return;
  }
  x.patch(head);
  x.res.flushHeaders();
}

/**
 * A body sent with content-length (or none at all): a hold with
 * `afterEvents` pauses right after the headers — a replacement given to
 * release() is refused there (the test's thread throws when it knows; one
 * given before the pause is not used, and the entry's `error` says so); a
 * cut sends its first `afterBytes` bytes. The bytes go in slices of
 * BODY_SLICE, each after the one before was taken (backpressure).
 */
async function writeBody(
  x: Exchange,
  response: WireHttpResponse,
  bodyless: boolean,
): Promise<void> {
  const body = bodyless ? new Uint8Array(0) : (response.pieces[0] ?? new Uint8Array(0));
  const hold = x.hold;
  if (hold?.afterEvents !== undefined) {
    x.hold = undefined;
    if (!(await x.flushed())) return;
    const fixed = fixedBody(x.req.method, response);
    const outcome = await pause(x, hold, fixed);
    if (x.closed) return;
    if (outcome.kind !== 'released') return heldEnd(x, outcome);
    if (outcome.response) {
      const note = `shimkit: the response passed to release() of hold() #${hold.id} was not used for ${x.label}: the hold is after the headers and ${fixed}, so nothing else can follow them; the scripted body was sent. Release it without a response, or hold before the headers (no afterEvents) to replace the whole response.`;
      x.patch({ error: x.error === undefined ? note : `${x.error} ${note}` });
    }
  }
  // No body on the wire: a cut at 0 still comes right after the headers; a later one is never reached.
  const point = response.cut?.afterBytes ?? response.cut?.afterEvents ?? 0;
  const cut = bodyless && point > 0 ? undefined : response.cut;
  const at = cut === undefined ? body.length : Math.min(point, body.length);
  const part = at < body.length ? body.subarray(0, at) : body;
  x.bytesSent = part.length;
  x.end(cut ? 'cut' : 'complete');
  let i = 0;
  for (; i + BODY_SLICE < part.length; i += BODY_SLICE) {
    if (!x.write(part.subarray(i, i + BODY_SLICE)) && !(await x.drain())) return;
  }
  const last = part.subarray(i);
  if (cut) {
    if (last.length > 0) x.write(last);
    return cutNow(x, cut.how);
  }
  x.endWith(last);
}

/**
 * A hold that was not released: before the headers a 504 (`x-should-retry:
 * false`) whose text says why; after them the connection ends without its
 * last chunk. dispose() closes the connection itself (the entry then says
 * so: exchange.ts).
 */
async function heldEnd(
  x: Exchange,
  outcome: Exclude<HoldOutcome, { kind: 'released' }>,
): Promise<void> {
  if (outcome.kind === 'ended' && outcome.why === 'dispose') return;
  const message =
    outcome.kind === 'timeout'
      ? `shimkit: the hold() on ${x.label} was not released within ${outcome.ms} ms; release() runs on the test's thread — if it is blocked in execFileSync/spawnSync, run the program with spawn (or shimkit's run()) and await it.`
      : `shimkit: the hold() on ${x.label} was ended by reset().`;
  if (x.res.headersSent) return cutNow(x, 'fin', message);
  const type = outcome.kind === 'timeout' ? 'shimkit_hold_timeout' : 'shimkit_reset';
  x.hold = undefined;
  return serve(x, errorResponse(504, type, message), message);
}

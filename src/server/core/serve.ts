import type { OutgoingHttpHeaders } from 'node:http';
import type { WireHttpResponse } from '../types.js';
import { cutNow, resetNow } from './cut.js';
import type { Exchange } from './exchange.js';
import type { HoldOutcome } from './holds.js';
import { writeStream } from './stream.js';
import { errorResponse } from './unmatched.js';
import { writeWire } from './wire.js';

/**
 * Serving one claimed response (design §5): a hold without `afterEvents`
 * pauses first, then `delayMs`, `resetBeforeHeaders`, the status and
 * headers (flushed for a chunked body, so a cut after 0 events comes right
 * after them), then the body by kind. The status is posted to the log
 * before the status line is written.
 */
export async function serve(x: Exchange, first: WireHttpResponse, error?: string): Promise<void> {
  if (x.closed) return;
  let response = first;
  const hold = x.hold;
  if (hold && hold.afterEvents === undefined) {
    x.hold = undefined;
    const outcome = await hold.block(x.log, x.timeoutMs);
    if (x.closed) return;
    if (outcome.kind !== 'released') return heldEnd(x, outcome);
    response = outcome.response ?? response;
  }
  if (response.delayMs > 0 && !(await x.wait(response.delayMs))) return;
  if (response.resetBeforeHeaders) return resetNow(x);
  if (response.kind === 'wire') return writeWire(x, response);
  writeHead(x, response, error);
  if (response.kind !== 'body') return writeStream(x, response, heldEnd);
  return writeBody(x, response);
}

function writeHead(x: Exchange, response: WireHttpResponse, error: string | undefined): void {
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of response.headers) {
    const had = headers[name];
    headers[name] =
      had === undefined ? value : [...(Array.isArray(had) ? had : [String(had)]), value];
  }
  if (
    response.kind === 'body' &&
    headers['content-length'] === undefined &&
    !headers['transfer-encoding']
  ) {
    headers['content-length'] = String(response.pieces[0]?.length ?? 0);
  }
  x.patch(
    error === undefined
      ? { status: response.status, startedAt: Date.now() }
      : { status: response.status, startedAt: Date.now(), error },
  );
  x.res.writeHead(response.status, headers);
  if (response.kind !== 'body' || x.hold?.afterEvents !== undefined) x.res.flushHeaders();
}

async function writeBody(x: Exchange, response: WireHttpResponse): Promise<void> {
  const body = response.pieces[0] ?? new Uint8Array(0);
  const hold = x.hold;
  if (hold?.afterEvents !== undefined) {
    x.hold = undefined;
    if (!(await x.flushed())) return;
    const outcome = await hold.block(x.log, x.timeoutMs);
    if (x.closed) return;
    if (outcome.kind !== 'released') return heldEnd(x, outcome);
    if (outcome.response) return writeStream(x, outcome.response, heldEnd);
  }
  const cut = response.cut;
  if (cut) {
    const at = cut.afterBytes ?? (cut.afterEvents === 0 ? 0 : body.length);
    const part = body.subarray(0, Math.min(at, body.length));
    x.bytesSent = part.length;
    x.end('cut');
    if (part.length > 0) x.res.write(part);
    return cutNow(x, cut.how);
  }
  x.bytesSent = body.length;
  x.end('complete');
  x.res.end(body, () => x.finish());
}

/**
 * A hold that was not released: before the headers a 504 (`x-should-retry:
 * false`) whose text says why; after them the connection ends without its
 * last chunk. dispose() closes the connection itself.
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

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Exchange } from './exchange.js';
import { declaredLength, type Intake } from './intake.js';
import { type CoreParts, entryOf, labelOf, rawIntake } from './parts.js';
import { headersOf } from './serve.js';
import { errorResponse } from './unmatched.js';

/**
 * Requests refused before any claim (design §6): a body over
 * `bodyLimitBytes` (413, `connection: close`), and what Node's parser
 * rejects (`clientError`: 400, or 431/408) — each logged with an `error`
 * that says what was wrong, before its answer is written.
 */

/** How much more of a refused body is read (and dropped) before the connection closes anyway. */
const DISCARD_MAX_BYTES = 256 * 1024 * 1024;
/** How long a client that stopped sending the rest of a refused body is waited for. */
const DISCARD_IDLE_MS = 1000;

/**
 * A body over the limit: the 413 is written at once (a client that reads
 * while it sends sees it early), then the rest of the body is read and
 * dropped — nothing of it is kept — until it ends, the client stops sending
 * for DISCARD_IDLE_MS, or DISCARD_MAX_BYTES more came; only then does the
 * connection close. A client that sends its whole body before it reads
 * (python's urllib, most blocking clients) would otherwise get EPIPE or a
 * reset instead of the 413.
 */
export function tooLarge(
  parts: CoreParts,
  req: IncomingMessage,
  res: ServerResponse,
  intake: Intake,
): void {
  const { x, body } = refusal(
    parts,
    req,
    res,
    intake,
    413,
    'shimkit_body_too_large',
    (label) =>
      `shimkit: the body of ${label} has ${intake.bodyBytes} bytes, over the limit of ${parts.settings.bodyLimitBytes} (the bodyLimitBytes option of createMockServer()); answered 413.`,
    true,
  );
  res.write(body, (failed?: Error | null) => {
    if (!failed) x.finish();
  });
  discardRest(req, () => res.end());
}

/**
 * A request refused before any claim (413, 401): its log entry, with the
 * `error` that says why, then the error response's status and headers
 * (`connection: close` when `closes`), its end posted before the body, which
 * the caller writes. Nothing of the script is touched but the request's seq.
 */
export function refusal(
  parts: CoreParts,
  req: IncomingMessage,
  res: ServerResponse,
  intake: Intake,
  status: number,
  type: string,
  errorOf: (label: string) => string,
  closes = false,
): { x: Exchange; body: Uint8Array } {
  const { script, log } = parts;
  const seq = script.nextSeq();
  const label = labelOf(intake, seq);
  const error = errorOf(label);
  log.entry(script.gen, entryOf(parts, intake, seq, null, null, error));
  const x = new Exchange({
    gen: script.gen,
    seq,
    req,
    res,
    log,
    timeoutMs: 0,
    hold: undefined,
    label,
    disposed: parts.disposed,
    error,
  });
  const wire = errorResponse(status, type, error);
  if (closes) wire.headers.push(['connection', 'close']);
  const body = wire.pieces[0] as Uint8Array;
  x.patch({ status, startedAt: Date.now() });
  if (closes) x.endsConnection();
  res.writeHead(status, headersOf(wire));
  x.bytesSent = body.length;
  x.end('complete');
  return { x, body };
}

/** Connections reading the rest of a refused body: a client that closes in its middle is no new request. */
const discarding = new WeakSet<Socket>();

/** Read and drop the rest of `req` (see tooLarge), then call `done` once. */
function discardRest(req: IncomingMessage, done: () => void): void {
  discarding.add(req.socket);
  let more = 0;
  let timer: NodeJS.Timeout | undefined;
  let over = false;
  const stop = () => {
    if (over) return;
    over = true;
    clearTimeout(timer);
    req.off('data', onData);
    done();
  };
  const idle = () => {
    clearTimeout(timer);
    timer = setTimeout(stop, DISCARD_IDLE_MS);
  };
  const onData = (chunk: Buffer) => {
    more += chunk.length;
    if (more > DISCARD_MAX_BYTES) stop();
    else idle();
  };
  if (req.readableEnded) {
    stop();
    return;
  }
  req.on('data', onData);
  req.once('end', stop);
  req.once('close', stop);
  req.on('error', () => {});
  idle();
  req.resume();
}

/**
 * A request whose client left (FIN or RST) in the middle of its body: logged
 * as what it was — method, path, headers, the body bytes that came —
 * `client-abort`, unclaimed and unanswered, with an `error` saying how far
 * it got. (One that left inside its head is not logged: see clientError.)
 */
export function halfSent(parts: CoreParts, req: IncomingMessage, intake: Intake): void {
  const { script, log } = parts;
  const seq = script.nextSeq();
  const declared = declaredLength(req);
  const got = `${intake.bodyBytes} ${declared === undefined ? `byte${intake.bodyBytes === 1 ? '' : 's'} of its chunked body` : `of the ${declared} bytes its content-length declared`}`;
  const error = `shimkit: the client closed its connection in the middle of the body of ${labelOf(intake, seq)}, after ${got}; nothing was claimed or answered.`;
  const entry = entryOf(parts, intake, seq, null, null, error);
  entry.endedBy = 'client-abort';
  entry.endedAt = Date.now();
  log.entry(script.gen, entry);
}

export type ParseError = NodeJS.ErrnoException & { rawPacket?: Buffer; reason?: string };

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

export function clientError(parts: CoreParts, error: ParseError, socket: Socket): void {
  if (
    error.code === 'ECONNRESET' ||
    !socket.writable ||
    parts.disposed() ||
    discarding.has(socket)
  ) {
    socket.destroy();
    return;
  }
  if (error.code === 'HPE_INVALID_EOF_STATE') {
    // The client's FIN in the middle of a request, as its RST (ECONNRESET
    // above): inside the head nothing was parsed and nothing is logged; in
    // the body the request's own 'error' logs it (halfSent).
    socket.destroy();
    return;
  }
  const { script, log } = parts;
  const seq = script.nextSeq();
  const intake = rawIntake(error.rawPacket ?? Buffer.alloc(0));
  const status =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? 431
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 408
        : 400;
  const message = `shimkit: request #${seq} is not well-formed HTTP (${error.code ?? 'parse error'}: ${error.reason ?? error.message}); answered ${status}.`;
  const body = errorResponse(status, 'shimkit_bad_request', message).pieces[0] as Uint8Array;
  const entry = entryOf(parts, intake, seq, null, null, message);
  Object.assign(entry, {
    status,
    bytesSent: body.length,
    endedBy: 'complete',
    startedAt: Date.now(),
  });
  log.entry(script.gen, entry);
  const head = `HTTP/1.1 ${status} ${REASONS[status]}\r\ncontent-type: application/json\r\nx-should-retry: false\r\nconnection: close\r\ncontent-length: ${body.length}\r\n\r\n`;
  socket.end(Buffer.concat([Buffer.from(head), body]), () =>
    log.patch(script.gen, seq, { endedAt: Date.now() }),
  );
}

import type { IncomingMessage } from 'node:http';
import type { RequestView } from './fit.js';

/**
 * Reading a request (design §6): its parts as the matchers see them, and its
 * whole body before the claim (a claim never depends on half a body), up to
 * `bodyLimitBytes`; past it the request is refused with 413 at once — by its
 * `content-length`, or while a chunked body is counted. A client that
 * leaves in the middle of the body (FIN or RST) gives an intake marked
 * `aborted` with what was read: it is logged `client-abort`, never claimed
 * (refuse.ts). One that leaves inside the head is not logged: Node parsed
 * nothing of it.
 */

/** A request read. */
export interface Intake {
  view: RequestView;
  /** `Date.now()` when its headers were in. */
  receivedAt: number;
  /** Body bytes, also those past the limit (a declared length when it was refused by it). */
  bodyBytes: number;
  /** Whether it was over the limit (then `view.body` holds only the bytes read, up to the log's share). */
  tooLarge: boolean;
  /** The client left before the body's end (`view.body` holds what came). */
  aborted: boolean;
}

/** The body of every request without one (a Buffer of no bytes: nothing can change it). */
const NO_BODY = Buffer.alloc(0);

/** The parts of a request line and its headers. */
export function viewOf(req: IncomingMessage): RequestView {
  const target = targetOf(req);
  const mark = target.indexOf('?');
  const path = (mark === -1 ? target : target.slice(0, mark)) || '/';
  const query: Record<string, string> = {};
  if (mark !== -1) {
    for (const [name, value] of new URLSearchParams(target.slice(mark + 1))) {
      query[name] = name in query ? `${query[name]},${value}` : value;
    }
  }
  const headers: Record<string, string> = {};
  const pairs = req.rawHeaders;
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    const name = (pairs[i] as string).toLowerCase();
    const value = pairs[i + 1] as string;
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  return { method: req.method ?? 'GET', path, query, headers, body: NO_BODY };
}

/** The request target, path and query; of an absolute-form one (a client that thinks we are its proxy) only those. */
export function targetOf(req: IncomingMessage): string {
  const raw = req.url ?? '/';
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw.replace(/^[^:]+:\/\/[^/?]*/, '') : raw;
}

/** The body's declared length, if the request has a valid one (from `view` when it is made already). */
export function declaredLength(req: IncomingMessage, view?: RequestView): number | undefined {
  const value = view ? view.headers['content-length'] : req.headers['content-length'];
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  return Number(value);
}

/**
 * Read `req` to its end, then call `done`; over `limit` bytes, call `done`
 * at once with `tooLarge` (the rest is discarded as it comes). `keep` is how
 * many bytes a refused request keeps for the log.
 */
export function readRequest(
  req: IncomingMessage,
  limit: number,
  keep: number,
  done: (intake: Intake) => void,
): void {
  const receivedAt = Date.now();
  const view = viewOf(req);
  const declared = declaredLength(req, view);
  if (declared !== undefined && declared > limit) {
    req.resume();
    done({ view, receivedAt, bodyBytes: declared, tooLarge: true, aborted: false });
    return;
  }
  const chunks: Buffer[] = [];
  let bytes = 0;
  let over = false;
  req.on('data', (chunk: Buffer) => {
    if (over) return;
    bytes += chunk.length;
    if (bytes > limit) {
      over = true;
      view.body = Buffer.concat([...chunks, chunk]).subarray(0, keep);
      chunks.length = 0;
      done({ view, receivedAt, bodyBytes: bytes, tooLarge: true, aborted: false });
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    if (over) return;
    if (chunks.length > 0)
      view.body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    done({ view, receivedAt, bodyBytes: bytes, tooLarge: false, aborted: false });
  });
  // A client that leaves mid-body (its FIN or RST): nothing to claim; logged as what came.
  req.on('error', () => {
    if (over || req.complete) return;
    view.body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    done({ view, receivedAt, bodyBytes: bytes, tooLarge: false, aborted: true });
  });
}

import { describeValue, nearest } from '../internal/describe.js';
import { InvalidResponseError } from '../internal/errors.js';
import { BODY_KINDS, base64, encodeBody, ms } from './response-body.js';
import {
  checkCut,
  checkFraming,
  checkHeaders,
  defaultHeaders,
  fieldError,
} from './response-head.js';
import type { MockServerResponse, ResponseCut, WireHttpResponse } from './types.js';

// MockServerResponse (plain JSON data, HT-02) → WireHttpResponse: checked
// once, on the test's thread, where the response was written, and encoded
// to bytes once, so the serving thread only writes (docs/design/mock-server.md §3).

const FIELDS: ReadonlyArray<keyof MockServerResponse> = [
  'status',
  'headers',
  'json',
  'text',
  'bodyBase64',
  'sse',
  'chunks',
  'wireBase64',
  'delayMs',
  'eventDelayMs',
  'cut',
  'resetBeforeHeaders',
  'times',
  'optional',
  'retryable',
];
/** What still means something beside `wireBase64`, which is the whole answer. */
const WITH_WIRE = ['wireBase64', 'delayMs', 'resetBeforeHeaders', 'times', 'optional', 'retryable'];

/**
 * Check a scripted response and encode it as the serving thread writes it.
 * `where` names it in errors (`the response passed to enqueue() #2`); every
 * problem is an `InvalidResponseError` naming the field and the value:
 * `the response passed to enqueue() #2: cut.afterEvents must be …, got -1 (number)`.
 *
 * Decisions the types leave open: fields set to `undefined` count as absent;
 * `times` is an integer from 1 to 1000000 or `'always'` (as a mock binary's
 * `MockResponse`), `'always'` becoming `Infinity` here; `status` is 200 to
 * 999 (a 1xx is no final answer: the client would hang; `wireBase64` can
 * still send one); framing headers that contradict the body
 * (`content-length` other than its length, a `transfer-encoding` other
 * than `chunked`) are refused, `wireBase64` being the way to send wrong
 * framing; a `cut` past the end
 * of the body or the events is refused (it would never happen); with
 * `resetBeforeHeaders` nothing of the answer is written, the rest is only
 * checked. The result holds only plain data and fresh `Uint8Array`s
 * (structured-clone safe, no shared pool memory).
 */
export function toWireResponse(value: unknown, where: string): WireHttpResponse {
  try {
    return encode(value, where);
  } catch (error) {
    if (error instanceof InvalidResponseError) throw error;
    throw new InvalidResponseError(`Could not read ${where}: ${String(error)}`, { cause: error });
  }
}

function encode(value: unknown, where: string): WireHttpResponse {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidResponseError(
      `Expected ${where} to be an object such as { status: 200, json: { ok: true } } or sse.chat('…'), got ${describeValue(value)}.`,
    );
  }
  // Own properties only, read once: a getter or an inherited key cannot
  // change what was checked.
  const r: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (!(FIELDS as readonly string[]).includes(key)) {
      const guess = nearest(key, FIELDS);
      throw new InvalidResponseError(
        `Unknown key \`${key}\` in ${where}.${guess ? ` Did you mean \`${guess}\`?` : ''} Valid fields: ${FIELDS.join(', ')}.`,
      );
    }
    if (field !== undefined) r[key] = field;
  }
  const bodies = BODY_KINDS.filter((kind) => kind in r);
  if (bodies.length > 1) {
    throw new InvalidResponseError(
      `${where} sets both \`${bodies[0]}\` and \`${bodies[1]}\`: a response has one body; keep one of them.`,
    );
  }
  const common = {
    delayMs: ms(where, 'delayMs', r.delayMs),
    resetBeforeHeaders: bool(where, 'resetBeforeHeaders', r.resetBeforeHeaders),
    times: times(where, r.times),
    optional: bool(where, 'optional', r.optional),
    retryable: bool(where, 'retryable', r.retryable),
  };
  if ('wireBase64' in r) {
    const extra = Object.keys(r).find((key) => !WITH_WIRE.includes(key));
    if (extra !== undefined) {
      throw new InvalidResponseError(
        `${where} sets \`wireBase64\` with \`${extra}\`: wireBase64 is the whole answer (status line, headers and body, as sent); keep only delayMs, resetBeforeHeaders, times, optional and retryable with it.`,
      );
    }
    const bytes = base64(where, 'wireBase64', r.wireBase64);
    return {
      ...common,
      status: wireStatus(bytes),
      headers: [],
      kind: 'wire',
      pieces: [bytes],
      gaps: [0],
      cut: undefined,
    };
  }
  const status = 'status' in r ? r.status : 200;
  if (!Number.isInteger(status) || (status as number) < 100 || (status as number) > 999) {
    throw fieldError(where, 'status', 'an integer from 200 to 999', status);
  }
  if ((status as number) < 200) {
    throw new InvalidResponseError(
      `${where}: status must be an integer from 200 to 999, got ${status as number}: a 1xx status (100 Continue, 101 Switching Protocols, 103 Early Hints …) is informational, not an answer, so the client would wait for the final response that never comes. To send such bytes on purpose, give the whole answer as wireBase64 (reply.wire()).`,
    );
  }
  const kind = bodies[0];
  if (r.eventDelayMs !== undefined && kind !== 'sse') {
    throw new InvalidResponseError(
      `${where} sets \`eventDelayMs\` without \`sse\`: it is the pause between SSE events; for chunks give each chunk its own delayMs.`,
    );
  }
  const body = encodeBody(where, r, kind);
  const userHeaders = checkHeaders(where, r.headers);
  checkFraming(where, userHeaders, kind, status as number, body.pieces);
  const cut: ResponseCut | undefined = checkCut(where, r.cut, kind, body.pieces);
  return {
    ...common,
    status: status as number,
    headers: [...defaultHeaders(kind, userHeaders), ...userHeaders.lines],
    kind: body.kind,
    pieces: body.pieces,
    gaps: body.gaps,
    cut,
  };
}

function bool(where: string, field: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw fieldError(where, field, 'true or false', value);
  return value;
}

function times(where: string, value: unknown): number {
  if (value === undefined) return 1;
  if (value === 'always') return Number.POSITIVE_INFINITY;
  if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > 1_000_000) {
    throw fieldError(where, 'times', "an integer from 1 to 1000000, or 'always'", value);
  }
  return value as number;
}

/** The status of a whole-wire answer, for the log: its status line's code, or 0 without one. */
function wireStatus(bytes: Uint8Array): number {
  const head = Buffer.from(bytes.subarray(0, 16)).toString('latin1');
  const match = /^HTTP\/\d(?:\.\d)? (\d{3})/.exec(head);
  return match ? Number(match[1]) : 0;
}

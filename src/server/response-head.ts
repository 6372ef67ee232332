import { describeValue, oneOf } from '../internal/describe.js';
import { InvalidResponseError } from '../internal/errors.js';
import { headerNameProblem, headerValueProblem } from '../internal/http-checks.js';
import type { ResponseCut } from './types.js';

// The parts of a MockServerResponse around its body: headers (and the
// defaults per body kind) and the cut. Used by response.ts.

/** Checked headers: lines in order (lower-case names), and every name given (an empty list too). */
export interface CheckedHeaders {
  lines: Array<[string, string]>;
  names: Set<string>;
}

/**
 * `headers`: an object of names to a string or a list of strings (one line
 * each; an empty list sends none and drops that name's default). Names are
 * lower-cased; one set twice in different case is refused.
 */
export function checkHeaders(where: string, value: unknown): CheckedHeaders {
  const checked: CheckedHeaders = { lines: [], names: new Set() };
  if (value === undefined) return checked;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw fieldError(
      where,
      'headers',
      'an object of header names to a string or a list of strings',
      value,
    );
  }
  for (const [given, field] of Object.entries(value)) {
    if (field === undefined) continue;
    const nameProblem = headerNameProblem(given);
    if (nameProblem) throw fieldError(where, 'headers', `keyed by ${nameProblem}`, given);
    const name = given.toLowerCase();
    if (checked.names.has(name)) {
      throw new InvalidResponseError(
        `${where}: headers sets \`${name}\` twice (names are case-insensitive); give one key, with a list of strings for a repeated header.`,
      );
    }
    checked.names.add(name);
    const values = Array.isArray(field) ? field : [field];
    for (const [i, line] of values.entries()) {
      const at = Array.isArray(field)
        ? `headers[${JSON.stringify(given)}][${i}]`
        : `headers[${JSON.stringify(given)}]`;
      if (typeof line !== 'string')
        throw fieldError(where, at, 'a string (or a list of strings)', line);
      const problem = headerValueProblem(line);
      if (problem) throw fieldError(where, at, problem, line);
      checked.lines.push([name, line]);
    }
  }
  return checked;
}

/** The default headers of a body kind that the user did not set. */
export function defaultHeaders(
  kind: string | undefined,
  user: CheckedHeaders,
): Array<[string, string]> {
  const defaults: Array<[string, string]> =
    kind === 'json'
      ? [['content-type', 'application/json']]
      : kind === 'text'
        ? [['content-type', 'text/plain; charset=utf-8']]
        : kind === 'sse'
          ? [
              ['content-type', 'text/event-stream; charset=utf-8'],
              ['cache-control', 'no-cache'],
            ]
          : [];
  return defaults.filter(([name]) => !user.names.has(name));
}

/**
 * The framing headers a scripted response may set: `content-length` only
 * with the body's own length (shimkit sets it anyway), and
 * `transfer-encoding` only as `chunked` (how Node sends a body without a
 * length), never both. Anything else would make the client misread the
 * body — wait for bytes that never come, or take the next response for
 * the rest of this one — while the log says `complete`; wrong framing on
 * purpose is a whole-wire answer's job (`wireBase64`, `reply.wire()`).
 * Statuses 204 and 304 send no body: 304 may say the unchanged body's length.
 */
export function checkFraming(
  where: string,
  user: CheckedHeaders,
  kind: string | undefined,
  status: number,
  pieces: readonly Uint8Array[],
): void {
  const lengths = user.lines.filter(([name]) => name === 'content-length');
  const codings = user.lines.filter(([name]) => name === 'transfer-encoding');
  const body = kind ?? 'empty';
  const instead =
    'to send wrong framing on purpose, give the whole answer as wireBase64 (reply.wire())';
  if (lengths.length > 0 && codings.length > 0) {
    throw new InvalidResponseError(
      `${where}: headers sets both \`content-length\` and \`transfer-encoding\`, which contradict each other (RFC 9112 §6.3: the client must not trust either). Leave both out (shimkit frames the body itself); ${instead}.`,
    );
  }
  for (const [, value] of codings) {
    if (value.trim().toLowerCase() !== 'chunked') {
      throw new InvalidResponseError(
        `${where}: headers["transfer-encoding"] is ${JSON.stringify(value)}, but shimkit sends the ${body} body ${kind === 'sse' || kind === 'chunks' ? 'chunked' : 'as it is'}, without that coding, so the client would misread it. Leave transfer-encoding out, or set it to "chunked"; ${instead}.`,
      );
    }
  }
  if (lengths.length === 0 || status === 304) return;
  const total = pieces.reduce((sum, piece) => sum + piece.byteLength, 0);
  const sent = status === 204 ? 0 : total;
  const wrong = lengths.find(([, value]) => value.trim() !== String(sent));
  if (wrong === undefined) return;
  const what =
    status === 204
      ? 'a 204 has no body'
      : `the ${body} body is ${total} byte${total === 1 ? '' : 's'}`;
  throw new InvalidResponseError(
    `${where}: headers["content-length"] is ${JSON.stringify(wrong[1])}, but ${what}: the client would wait for bytes that never come, or read the next response as part of this one, while the log says complete. Leave content-length out (shimkit sets it from the body); to cut the body short use cut: { afterBytes, how }; ${instead}.`,
  );
}

const CUT_KEYS = ['afterEvents', 'afterBytes', 'how'];
const CUT_HOW = ['fin', 'rst', 'stall'] as const;

/**
 * `cut`: exactly one of `afterEvents` (only with `sse`, at most the number
 * of events) and `afterBytes` (at most the body's length), and `how`.
 * Returned as a fresh object holding only those keys.
 */
export function checkCut(
  where: string,
  value: unknown,
  kind: string | undefined,
  pieces: readonly Uint8Array[],
): ResponseCut | undefined {
  if (value === undefined) return undefined;
  const shape = "an object { afterEvents | afterBytes, how: 'fin' | 'rst' | 'stall' }";
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw fieldError(where, 'cut', shape, value);
  }
  const c = value as Record<string, unknown>;
  const unknown = Object.keys(c).find((key) => !CUT_KEYS.includes(key));
  if (unknown !== undefined) {
    throw new InvalidResponseError(
      `Unknown key \`${unknown}\` in ${where}: cut. Valid keys: ${CUT_KEYS.join(', ')}.`,
    );
  }
  if (!CUT_HOW.includes(c.how as never)) throw fieldError(where, 'cut.how', oneOf(CUT_HOW), c.how);
  const how = c.how as ResponseCut['how'];
  if ((c.afterEvents === undefined) === (c.afterBytes === undefined)) {
    throw new InvalidResponseError(
      `${where}: cut must have exactly one of \`afterEvents\` and \`afterBytes\`, got ${describeValue(value)}.`,
    );
  }
  if (c.afterEvents !== undefined) {
    if (kind !== 'sse') {
      throw new InvalidResponseError(
        `${where}: cut.afterEvents needs an \`sse\` body (it counts SSE events); cut other bodies with afterBytes.`,
      );
    }
    const n = count(where, 'cut.afterEvents', c.afterEvents, pieces.length, 'the number of events');
    return { afterEvents: n, how };
  }
  const total = pieces.reduce((sum, piece) => sum + piece.byteLength, 0);
  return {
    afterBytes: count(where, 'cut.afterBytes', c.afterBytes, total, 'the body length'),
    how,
  };
}

function count(where: string, field: string, value: unknown, max: number, what: string): number {
  if (!Number.isSafeInteger(value) || (value as number) < 0) {
    throw fieldError(where, field, 'a non-negative integer', value);
  }
  if ((value as number) > max) {
    throw fieldError(
      where,
      field,
      `at most ${what}, ${max} (a cut past the end would never happen)`,
      value,
    );
  }
  return value as number;
}

/** `the response passed to enqueue() #2: cut.afterEvents must be …, got -1 (number).` */
export function fieldError(
  where: string,
  field: string,
  expected: string,
  value: unknown,
): InvalidResponseError {
  return new InvalidResponseError(
    `${where}: ${field} must be ${expected}, got ${describeValue(value)}.`,
  );
}

import { describeValue } from '../internal/describe.js';
import { InvalidResponseError } from '../internal/errors.js';
import { isStrictBase64 } from '../internal/http-checks.js';
import { MAX_TIMER_MS } from '../internal/limits.js';
import { fieldError } from './response-head.js';
import { encodeSseEvent } from './sse/encode.js';
import type { WireHttpResponse } from './types.js';

// The body of a MockServerResponse → its pieces (one per write) and the
// pause before each. Used by response.ts.

export const BODY_KINDS = ['json', 'text', 'bodyBase64', 'sse', 'chunks'] as const;
/** The body field a response sets, if any. */
export type BodyKind = (typeof BODY_KINDS)[number];

const CHUNK_KEYS = ['text', 'base64', 'delayMs'];
const LONE_SURROGATE = /\p{Cs}/u;
const utf8 = new TextEncoder();

export type Body = Pick<WireHttpResponse, 'kind' | 'pieces' | 'gaps'>;

/** Encode the body field `kind` of `r` (none: an empty body). */
export function encodeBody(
  where: string,
  r: Record<string, unknown>,
  kind: BodyKind | undefined,
): Body {
  const one = (piece: Uint8Array): Body => ({ kind: 'body', pieces: [piece], gaps: [0] });
  switch (kind) {
    case undefined:
      return one(new Uint8Array(0));
    case 'json':
      return one(utf8.encode(jsonText(where, r.json)));
    case 'text':
      return one(utf8.encode(text(where, 'text', r.text)));
    case 'bodyBase64':
      return one(base64(where, 'bodyBase64', r.bodyBase64));
    case 'sse': {
      const events = list(where, 'sse', r.sse, 'an array of SSE events such as { data: "…" }');
      const gap = ms(where, 'eventDelayMs', r.eventDelayMs);
      return {
        kind: 'sse',
        pieces: events.map((event, i) => encodeSseEvent(event as never, `${where}: sse[${i}]`)),
        gaps: events.map((_, i) => (i === 0 ? 0 : gap)),
      };
    }
    case 'chunks': {
      const chunks = list(where, 'chunks', r.chunks, 'an array of { text | base64, delayMs? }');
      const pieces: Uint8Array[] = [];
      const gaps: number[] = [];
      for (const [i, chunk] of chunks.entries()) {
        const at = `chunks[${i}]`;
        if (typeof chunk !== 'object' || chunk === null || Array.isArray(chunk)) {
          throw fieldError(where, at, 'an object { text | base64, delayMs? }', chunk);
        }
        const c = chunk as Record<string, unknown>;
        const unknown = Object.keys(c).find((key) => !CHUNK_KEYS.includes(key));
        if (unknown !== undefined) {
          throw new InvalidResponseError(
            `Unknown key \`${unknown}\` in ${where}: ${at}. Valid keys: ${CHUNK_KEYS.join(', ')}.`,
          );
        }
        if ((c.text === undefined) === (c.base64 === undefined)) {
          throw new InvalidResponseError(
            `${where}: ${at} must have exactly one of \`text\` and \`base64\`, got ${describeValue(chunk)}.`,
          );
        }
        pieces.push(
          c.text !== undefined
            ? utf8.encode(text(where, `${at}.text`, c.text))
            : base64(where, `${at}.base64`, c.base64),
        );
        gaps.push(ms(where, `${at}.delayMs`, c.delayMs));
      }
      return { kind: 'chunks', pieces, gaps };
    }
  }
}

function jsonText(where: string, value: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    throw new InvalidResponseError(
      `${where}: json must be a JSON value; JSON.stringify failed: ${String(error)}.`,
      { cause: error },
    );
  }
  if (json === undefined) throw fieldError(where, 'json', 'a JSON value', value);
  return json;
}

function text(where: string, field: string, value: unknown): string {
  if (typeof value !== 'string') throw fieldError(where, field, 'a string', value);
  const surrogate = LONE_SURROGATE.exec(value);
  if (surrogate) {
    throw fieldError(
      where,
      field,
      `well-formed UTF-16 (a lone surrogate at index ${surrogate.index} has no UTF-8 form; send bytes as base64)`,
      value,
    );
  }
  return value;
}

export function base64(where: string, field: string, value: unknown): Uint8Array {
  if (!isStrictBase64(value)) {
    throw fieldError(where, field, 'canonical base64 (padded, no whitespace)', value);
  }
  return new Uint8Array(Buffer.from(value, 'base64'));
}

function list(where: string, field: string, value: unknown, expected: string): unknown[] {
  if (!Array.isArray(value)) throw fieldError(where, field, expected, value);
  return value;
}

/** Milliseconds: finite, 0 or more, at most what a Node timer honours; 0 when undefined. */
export function ms(where: string, field: string, value: unknown): number {
  if (value === undefined) return 0;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_TIMER_MS) {
    throw fieldError(where, field, `a number of milliseconds from 0 to ${MAX_TIMER_MS}`, value);
  }
  return value;
}

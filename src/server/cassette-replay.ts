import { describeValue } from '../internal/describe.js';
import { InvalidResponseError } from '../internal/errors.js';
import { isStrictBase64 } from '../internal/http-checks.js';
import { MAX_TIMER_MS } from '../internal/limits.js';
import type { CassetteInteraction, RecordedSseEvent } from './cassette-format.js';
import type { WireRequestMatch } from './protocol.js';
import { redactJson } from './redact.js';
import { toWireResponse } from './response.js';
import { checkHeaders } from './response-head.js';
import type { WireHttpResponse } from './types.js';

/**
 * A cassette's interactions as expectations (HT-09): each answers one
 * request (`times: 1`) with its method, path, exact query and body (design
 * §8), named `cassette:<file>#<n>` (1-based, the file's order). The answer
 * is the recorded one: status, exactly the recorded headers, the body bytes
 * or the SSE events — at once, or (`timing: 'recorded'`) each after the gap
 * it came after. Every field is checked here, when `createMockServer()` is
 * called: a bad one is an error naming the file and the interaction.
 */

/** One interaction, ready to be scripted; not exported from src/index.ts. */
export interface ReplayEntry {
  name: string;
  match: WireRequestMatch;
  /** `{ method: 'POST', path: '/v1/x', query and body as recorded }`, for reports. */
  matchText: string;
  wire: WireHttpResponse;
}

export function replayEntries(
  interactions: readonly unknown[],
  file: string,
  timing: 'none' | 'recorded',
  broken: (what: string) => Error,
): ReplayEntry[] {
  return interactions.map((interaction, i) => {
    const at = `interactions[${i}]`;
    try {
      return replayEntry(interaction, `${at}`, `cassette:${file}#${i + 1}`, timing);
    } catch (error) {
      if (!(error instanceof InvalidResponseError)) throw error;
      throw broken(`has a bad interaction: ${error.message.replace(/\.$/, '')}`);
    }
  });
}

function replayEntry(
  value: unknown,
  at: string,
  name: string,
  timing: 'none' | 'recorded',
): ReplayEntry {
  const interaction = record(
    value,
    at,
    'an object { request, response, durationMs }',
  ) as unknown as CassetteInteraction;
  const request = record(
    interaction.request,
    `${at}.request`,
    'an object { method, path, query, bodyBase64, … }',
  );
  const { method, path, query = {}, bodyBase64 = '' } = request;
  if (typeof method !== 'string' || !/^[A-Za-z!#$%&'*+.^_`|~0-9-]+$/.test(method)) {
    throw bad(`${at}.request.method`, 'an HTTP method such as "POST"', method);
  }
  if (typeof path !== 'string' || !path.startsWith('/')) {
    throw bad(`${at}.request.path`, 'a path starting with "/"', path);
  }
  const queryRecord = record(query, `${at}.request.query`, 'an object of names to strings');
  for (const [key, v] of Object.entries(queryRecord)) {
    if (typeof v !== 'string') throw bad(`${at}.request.query.${key}`, 'a string', v);
  }
  if (!isStrictBase64(bodyBase64))
    throw bad(`${at}.request.bodyBase64`, 'canonical base64', bodyBase64);
  const match: WireRequestMatch = {
    method: method.toUpperCase(),
    path,
    recorded: {
      query: { ...(queryRecord as Record<string, string>) },
      body:
        'json' in request
          ? { json: redactJson(request.json).value } // a file written before bodies were redacted
          : { bytes: new Uint8Array(Buffer.from(bodyBase64, 'base64')) },
    },
  };
  const matchText = `{ method: '${match.method}', path: '${path}', query and body as recorded }`;
  return {
    name,
    match,
    matchText,
    wire: replayResponse(interaction.response, `${at}.response`, timing),
  };
}

/** The recorded answer as the serving thread writes it. */
function replayResponse(value: unknown, at: string, timing: 'none' | 'recorded'): WireHttpResponse {
  const response = record(value, at, 'an object { status, headers, bodyBase64 | sse }');
  const { status, headers = {}, bodyBase64, sse } = response;
  if (bodyBase64 !== undefined && sse !== undefined) {
    throw new InvalidResponseError(
      `${at} has both \`bodyBase64\` and \`sse\`; a response has one body.`,
    );
  }
  let events: RecordedSseEvent[] | undefined;
  if (sse !== undefined) {
    if (!Array.isArray(sse)) throw bad(`${at}.sse`, 'an array of SSE events with atMs', sse);
    events = sse.map((event, i) => {
      const e = record(event, `${at}.sse[${i}]`, 'an SSE event { data, atMs, … }');
      const atMs = e.atMs;
      if (typeof atMs !== 'number' || !Number.isFinite(atMs) || atMs < 0) {
        throw bad(`${at}.sse[${i}].atMs`, 'a number of milliseconds from 0', atMs);
      }
      return e as unknown as RecordedSseEvent;
    });
  }
  const body = events
    ? { sse: events.map(({ atMs: _, ...event }) => event) }
    : { bodyBase64: bodyBase64 ?? '' };
  // A recorded stream is replayed chunked: a length recorded with it is dropped, not refused.
  const framed = events
    ? Object.fromEntries(
        Object.entries(headers as object).filter(
          ([name]) => name.toLowerCase() !== 'content-length',
        ),
      )
    : headers;
  const wire = toWireResponse({ status, headers: framed, ...body }, at);
  // Exactly the headers recorded (no defaults); a length never goes with a chunked stream.
  const lines = checkHeaders(at, headers).lines;
  wire.headers = events ? lines.filter(([name]) => name !== 'content-length') : lines;
  if (events && timing === 'recorded') {
    let before = 0;
    wire.gaps = events.map(({ atMs }) => {
      const gap = Math.min(MAX_TIMER_MS, Math.max(0, atMs - before));
      before = Math.max(before, atMs);
      return gap;
    });
  }
  return wire;
}

function record(value: unknown, at: string, expected: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw bad(at, expected, value);
  return value as Record<string, unknown>;
}

function bad(at: string, expected: string, value: unknown): InvalidResponseError {
  return new InvalidResponseError(`${at} must be ${expected}, got ${describeValue(value)}.`);
}

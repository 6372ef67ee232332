import type { WireCassette, WireRecordedMatch } from '../protocol.js';

/**
 * The part of a replayed interaction's match beyond method and path (HT-09):
 * the query exactly as recorded — the same names, the same values, where a
 * `[redacted]` value takes any — and the body: the same JSON value when the
 * recording was JSON (key order and spacing do not matter; both sides with
 * their key-like members `[redacted]`, redact.ts, so any key matches), else
 * the same bytes. And the line the unmatched answer adds under a replayed cassette.
 */

const REDACTED = '[redacted]';

/**
 * Why the request's query or body is not the recorded one, or undefined when
 * they are. `json` gives the body's JSON value as a cassette keeps it (its
 * key-like members `[redacted]`, as the recorded one's are).
 */
export function recordedMismatch(
  recorded: WireRecordedMatch,
  query: Readonly<Record<string, string>>,
  body: Uint8Array,
  json: () => { value: unknown } | undefined,
): string | undefined {
  for (const [name, value] of Object.entries(recorded.query)) {
    const got = query[name];
    if (got === undefined) return `query.${name}: recorded ${show(value)}, got nothing`;
    if (value !== REDACTED && got !== value)
      return `query.${name}: recorded ${show(value)}, got ${show(got)}`;
  }
  const extra = Object.keys(query).find((name) => !Object.hasOwn(recorded.query, name));
  if (extra !== undefined) return `query.${extra}: not in the recording, got ${show(query[extra])}`;
  if ('json' in recorded.body) {
    const parsed = json();
    if (parsed === undefined)
      return `body: recorded JSON, got ${body.length} bytes that are not JSON`;
    return jsonDifference(recorded.body.json, parsed.value, 'body');
  }
  const bytes = recorded.body.bytes;
  if (bytes.length === body.length && Buffer.from(bytes).equals(body)) return undefined;
  return `body: recorded ${bytes.length} bytes, got ${body.length} other bytes`;
}

/** The first place where two JSON values differ, in words; undefined when they are equal. */
function jsonDifference(expected: unknown, actual: unknown, at: string): string | undefined {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${at}: recorded an array, got ${show(actual)}`;
    if (actual.length !== expected.length) {
      return `${at}: recorded an array of ${expected.length}, got one of ${actual.length}`;
    }
    for (let i = 0; i < expected.length; i++) {
      const why = jsonDifference(expected[i], actual[i], `${at}[${i}]`);
      if (why !== undefined) return why;
    }
    return undefined;
  }
  if (typeof expected === 'object' && expected !== null) {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) {
      return `${at}: recorded an object, got ${show(actual)}`;
    }
    const e = expected as Record<string, unknown>;
    const a = actual as Record<string, unknown>;
    for (const key of Object.keys(e)) {
      if (!Object.hasOwn(a, key)) return `${at}.${key}: recorded ${show(e[key])}, got nothing`;
      const why = jsonDifference(e[key], a[key], `${at}.${key}`);
      if (why !== undefined) return why;
    }
    const extra = Object.keys(a).find((key) => !Object.hasOwn(e, key));
    return extra === undefined
      ? undefined
      : `${at}.${extra}: not in the recording, got ${show(a[extra])}`;
  }
  return expected === actual ? undefined : `${at}: recorded ${show(expected)}, got ${show(actual)}`;
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

/**
 * `The cassette /t/chat.json (replayed: 3 interactions, each answers one
 * request) has none for it. To record it: mode 'record-missing' with an
 * upstream (or SHIMKIT_CASSETTE_MODE=record-missing).`
 */
export function replayNote(cassette: WireCassette): string {
  const n = cassette.recorded;
  return `The cassette ${cassette.path} (replayed: ${n} interaction${n === 1 ? '' : 's'}, each answers one request) has none left for it. To record it: mode 'record-missing' with an upstream (or SHIMKIT_CASSETTE_MODE=record-missing).`;
}

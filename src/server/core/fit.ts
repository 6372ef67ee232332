import { argFits, describeArg } from '../../internal/matcher.js';
import type { WireRequestMatch, WireValue } from '../protocol.js';
import { redactJson } from '../redact.js';
import { recordedMismatch } from './replay.js';

/**
 * Whether a request fits a RequestMatch's static parts (everything but the
 * predicate, which only the test's thread can run), why not in words, and
 * how close it came. Values are the shared matcher encoding
 * (src/internal/matcher.ts): a string is exact, `{ regex, flags }` a
 * pattern, `{ any: true }` anything present.
 */

/** What a match looks at in a request. */
export interface RequestView {
  method: string;
  path: string;
  query: Record<string, string>;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** The whole body (not only what the log keeps). */
  body: Buffer;
  /** The body parsed as JSON, once asked: `NOT_JSON` when it is not JSON. */
  parsed?: unknown;
  /** That JSON with its key-like members `[redacted]`, once a replayed interaction asked. */
  redacted?: { value: unknown };
}

export const NOT_JSON: unique symbol = Symbol('not JSON');

/** The body as JSON (parsed on the first ask), or `NOT_JSON`. */
export function jsonOf(view: RequestView): unknown {
  if (!('parsed' in view)) {
    try {
      view.parsed = view.body.length === 0 ? NOT_JSON : JSON.parse(view.body.toString('utf8'));
    } catch {
      view.parsed = NOT_JSON;
    }
  }
  return view.parsed;
}

/** The body's JSON value as a cassette keeps it (key-like members `[redacted]`), or undefined when it is not JSON. */
function redactedJsonValue(view: RequestView): { value: unknown } | undefined {
  const value = jsonOf(view);
  if (value === NOT_JSON) return undefined;
  view.redacted ??= { value: redactJson(value).value };
  return view.redacted;
}

/** Whether the static parts of `match` fit. */
export function fits(match: WireRequestMatch, view: RequestView): boolean {
  return mismatch(match, view) === undefined;
}

/** The first static part of `match` that does not fit, in words (`json.stream: expected true, got false`). */
export function mismatch(match: WireRequestMatch, view: RequestView): string | undefined {
  return parts(match, view).find((part) => part !== undefined);
}

/** How many static parts of `match` fit (for naming the closest expectation). */
export function closeness(match: WireRequestMatch, view: RequestView): number {
  return parts(match, view).filter((part) => part === undefined).length;
}

/** One entry per part given: undefined when it fits, else why not. */
function parts(match: WireRequestMatch, view: RequestView): Array<string | undefined> {
  const out: Array<string | undefined> = [];
  if (match.method !== undefined) {
    const got = view.method.toUpperCase();
    const want = match.method;
    out.push(
      argFits(want, got)
        ? undefined
        : `method: expected ${typeof want === 'string' ? want : describeArg(want)}, got ${got}`,
    );
  }
  if (match.path !== undefined) {
    out.push(
      argFits(match.path, view.path)
        ? undefined
        : `path: expected ${describeArg(match.path)}, got ${JSON.stringify(view.path)}`,
    );
  }
  for (const [name, m] of Object.entries(match.query ?? {})) {
    out.push(valueMismatch(`query.${name}`, m, view.query[name]));
  }
  for (const [name, m] of Object.entries(match.headers ?? {})) {
    out.push(valueMismatch(`headers.${name}`, m, view.headers[name]));
  }
  if (match.hasJson) {
    const body = jsonOf(view);
    out.push(
      body === NOT_JSON
        ? `json: the body is not JSON (${view.body.length} bytes)`
        : jsonMismatch(match.json, body, 'json'),
    );
  }
  if (match.recorded)
    out.push(
      recordedMismatch(match.recorded, view.query, view.body, () => redactedJsonValue(view)),
    );
  return out;
}

function valueMismatch(at: string, m: WireValue, got: string | undefined): string | undefined {
  if (argFits(m, got)) return undefined;
  return `${at}: expected ${describeArg(m)}, got ${got === undefined ? 'nothing' : JSON.stringify(got)}`;
}

function isAny(value: unknown): value is { any: true } {
  return isRecord(value) && value.any === true && Object.keys(value).length === 1;
}

function isPattern(value: unknown): value is { regex: string; flags: string } {
  if (!isRecord(value)) return false;
  const keys = Object.keys(value);
  return keys.length === 2 && typeof value.regex === 'string' && typeof value.flags === 'string';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Whether `actual` contains `expected`: objects by key, recursively; arrays
 * element by element and of the same length; other values equal.
 */
export function jsonMismatch(expected: unknown, actual: unknown, at: string): string | undefined {
  if (isAny(expected)) {
    return actual === undefined ? `${at}: expected any value, got nothing` : undefined;
  }
  if (isPattern(expected)) {
    return typeof actual === 'string' && argFits(expected, actual)
      ? undefined
      : `${at}: expected ${describeArg(expected)}, got ${show(actual)}`;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) {
      return `${at}: expected an array of ${expected.length}, got ${show(actual)}`;
    }
    if (actual.length !== expected.length) {
      return `${at}: expected an array of ${expected.length}, got one of ${actual.length}`;
    }
    for (let i = 0; i < expected.length; i++) {
      const why = jsonMismatch(expected[i], actual[i], `${at}[${i}]`);
      if (why !== undefined) return why;
    }
    return undefined;
  }
  if (isRecord(expected)) {
    if (!isRecord(actual)) return `${at}: expected an object, got ${show(actual)}`;
    for (const [key, value] of Object.entries(expected)) {
      const got = Object.hasOwn(actual, key) ? actual[key] : undefined;
      const why = jsonMismatch(value, got, `${at}${keyPath(key)}`);
      if (why !== undefined) return why;
    }
    return undefined;
  }
  return expected === actual
    ? undefined
    : `${at}: expected ${JSON.stringify(expected)}, got ${show(actual)}`;
}

function keyPath(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = Array.isArray(value) ? 'an array too deep to show' : 'a value too deep to show';
  }
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

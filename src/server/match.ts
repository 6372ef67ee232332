import { describeValue, nearest } from '../internal/describe.js';
import { InvalidOptionError } from '../internal/errors.js';
import type { WireRequestMatch, WireValue } from './protocol.js';
import type { LoggedRequest, RequestMatch } from './types.js';

/**
 * A RequestMatch checked and encoded for the worker (design §3 match.ts):
 * a RegExp as `{ regex, flags }` and `any()` as `{ any: true }`, the
 * matcher encoding the mock binaries share (src/internal/matcher.ts); the
 * predicate stays on the test's thread, under an id.
 */

const KEYS = ['method', 'path', 'query', 'headers', 'json', 'predicate'];

export interface EncodedMatch {
  wire: WireRequestMatch;
  predicate: ((request: LoggedRequest) => boolean) | undefined;
}

export function encodeMatch(
  match: unknown,
  where: string,
  keepPredicate: (fn: (request: LoggedRequest) => boolean) => number,
): EncodedMatch {
  if (typeof match !== 'object' || match === null || Array.isArray(match)) {
    throw new InvalidOptionError(
      `Expected the match of ${where} to be an object such as { method: 'POST', path: '/v1/chat/completions' }, got ${describeValue(match)}.`,
    );
  }
  for (const key of Object.keys(match)) {
    if (!KEYS.includes(key)) {
      const guess = nearest(key, KEYS);
      throw new InvalidOptionError(
        `Unknown key \`${key}\` in the match of ${where}.${guess ? ` Did you mean \`${guess}\`?` : ''} Valid keys: ${KEYS.join(', ')}.`,
      );
    }
  }
  const m = match as RequestMatch;
  const wire: WireRequestMatch = {};
  if (m.method !== undefined) {
    const method: unknown = m.method;
    if (typeof method === 'string' && /^[A-Za-z!#$%&'*+.^_`|~0-9-]+$/.test(method)) {
      wire.method = method.toUpperCase();
    } else if (method instanceof RegExp || isAny(method)) {
      wire.method = value(method, where, 'method');
    } else {
      throw bad(
        where,
        'method',
        'an HTTP method such as "POST" (any case), a RegExp such as /^(GET|HEAD)$/ (tested on the upper-case method) or any()',
        method,
      );
    }
  }
  if (m.path !== undefined) {
    const path: unknown = m.path;
    if (
      !(path instanceof RegExp) &&
      !isAny(path) &&
      (typeof path !== 'string' || !path.startsWith('/'))
    ) {
      throw bad(
        where,
        'path',
        'a path starting with "/" (without the query), a RegExp or any()',
        path,
      );
    }
    wire.path = value(path, where, 'path');
  }
  if (m.query !== undefined) wire.query = record(m.query, where, 'query', false);
  if (m.headers !== undefined) wire.headers = record(m.headers, where, 'headers', true);
  if (m.json !== undefined) {
    wire.hasJson = true;
    wire.json = jsonMatcher(m.json, where, 'json');
  }
  let predicate: EncodedMatch['predicate'];
  if (m.predicate !== undefined) {
    if (typeof m.predicate !== 'function') {
      throw bad(where, 'predicate', 'a function (request) => boolean', m.predicate);
    }
    predicate = m.predicate;
    wire.predicate = keepPredicate(m.predicate);
  }
  return { wire, predicate };
}

function bad(where: string, key: string, expected: string, got: unknown): InvalidOptionError {
  return new InvalidOptionError(
    `Expected \`${key}\` in the match of ${where} to be ${expected}, got ${describeValue(got)}.`,
  );
}

function isAny(v: unknown): v is { any: true } {
  return typeof v === 'object' && v !== null && (v as { any?: unknown }).any === true;
}

function value(v: unknown, where: string, key: string): WireValue {
  if (typeof v === 'string') return v;
  if (v instanceof RegExp) return { regex: v.source, flags: v.flags.replace(/[gy]/g, '') };
  if (isAny(v)) return { any: true };
  throw bad(where, key, 'a string, a RegExp or any()', v);
}

function record(v: unknown, where: string, key: string, lower: boolean): Record<string, WireValue> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw bad(where, key, 'an object of names to strings, RegExps or any()', v);
  }
  const out: Record<string, WireValue> = {};
  for (const [name, m] of Object.entries(v)) {
    out[lower ? name.toLowerCase() : name] = value(m, where, `${key}.${name}`);
  }
  return out;
}

/** A JSON subset matcher: JSON values, with RegExps (strings matching) and any() inside. */
function jsonMatcher(v: unknown, where: string, at: string): unknown {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw bad(where, at, 'a JSON value', v);
    return v;
  }
  if (v instanceof RegExp) return value(v, where, at);
  if (isAny(v)) return { any: true };
  if (Array.isArray(v)) return v.map((item, i) => jsonMatcher(item, where, `${at}[${i}]`));
  if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(v)) {
      if (item !== undefined) out[key] = jsonMatcher(item, where, `${at}.${key}`);
    }
    return out;
  }
  throw bad(
    where,
    at,
    'a JSON value (objects, arrays, strings, numbers, booleans, null), a RegExp or any()',
    v,
  );
}

/** A match as a person reads it in a report: `{ method: 'POST', path: '/v1/x' }`. */
export function describeRequestMatch(match: WireRequestMatch): string {
  const parts: string[] = [];
  const show = (v: WireValue) =>
    typeof v === 'string' ? `'${v}'` : 'any' in v ? 'any()' : `/${v.regex}/${v.flags}`;
  if (match.method !== undefined) parts.push(`method: ${show(match.method)}`);
  if (match.path !== undefined) parts.push(`path: ${show(match.path)}`);
  for (const [k, q] of Object.entries(match.query ?? {})) parts.push(`query.${k}: ${show(q)}`);
  for (const [k, h] of Object.entries(match.headers ?? {})) parts.push(`headers.${k}: ${show(h)}`);
  if (match.hasJson) {
    const text = JSON.stringify(match.json);
    parts.push(`json: ${text.length > 40 ? `${text.slice(0, 39)}…` : text}`);
  }
  if (match.predicate !== undefined) parts.push('predicate');
  return parts.length === 0 ? '{}' : `{ ${parts.join(', ')} }`;
}

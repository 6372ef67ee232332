import { describeValue, nearest } from '../../internal/describe.js';
import { InvalidOptionError } from '../../internal/errors.js';
import type { AnyValue, RequestMatch } from '../types.js';
import {
  type CallsAction,
  calls,
  type PlaybookAction,
  type PromptMatch,
  parallel,
  says,
  type Turn,
  when,
} from './actions.js';

/**
 * The JSON form of a playbook (PB-07), for `shimkit serve --playbook FILE`
 * and any language:
 *
 *   { "name": "deploy", "match": { "headers": { "x-agent": "a" } },
 *     "turns": [{ "when": "List files", "do": [
 *       { "calls": "bash", "params": { "command": "ls" } },
 *       { "parallel": [{ "calls": "read", "params": { "path": "a" } }, …] },
 *       { "says": "Found 2 files." } ] }] }
 *
 * A pattern is `{ "regex": "…", "flags": "i" }` and anything present
 * `{ "any": true }`, in `when` and in `match` (method, path, query,
 * headers, and inside json).
 */
export interface PlaybookJson {
  name?: string;
  match?: Record<string, unknown>;
  turns: Array<{ when: unknown; do: unknown[] }>;
}

/** A playbook given as JSON data: its turns and options, checked. */
export function playbookFromJson(
  value: unknown,
  where: string,
): { turns: Turn[]; name?: string; match?: RequestMatch } {
  const top = object(value, where, 'the playbook', ['name', 'match', 'turns']);
  const out: { turns: Turn[]; name?: string; match?: RequestMatch } = { turns: [] };
  if (top.name !== undefined) {
    if (typeof top.name !== 'string') throw bad(where, 'name', 'a string', top.name);
    out.name = top.name;
  }
  if (top.match !== undefined) {
    out.match = patterns(object(top.match, where, 'match', undefined)) as RequestMatch;
  }
  if (!Array.isArray(top.turns) || top.turns.length === 0) {
    throw bad(where, 'turns', 'a non-empty array of { "when": …, "do": [...] }', top.turns);
  }
  out.turns = top.turns.map((turn, t) => {
    const at = `turns[${t}]`;
    const o = object(turn, where, at, ['when', 'do']);
    const prompt = promptOf(o.when, where, `${at}.when`);
    if (!Array.isArray(o.do) || o.do.length === 0) {
      throw bad(
        where,
        `${at}.do`,
        'a non-empty array of actions ({ "calls" }, { "says" }, { "parallel" })',
        o.do,
      );
    }
    const actions = o.do.map((action, i) => actionOf(action, where, `${at}.do[${i}]`));
    return when(prompt, actions);
  });
  return out;
}

function actionOf(value: unknown, where: string, at: string): PlaybookAction {
  const o = object(value, where, at, ['calls', 'params', 'says', 'parallel']);
  const kinds = ['calls', 'says', 'parallel'].filter((k) => o[k] !== undefined);
  if (kinds.length !== 1) {
    throw new InvalidOptionError(
      `${where}: ${at} must have exactly one of "calls" (with "params"), "says" or "parallel", got ${kinds.length === 0 ? 'none' : kinds.join(' and ')}.`,
    );
  }
  if (o.says !== undefined) {
    if (o.params !== undefined) throw bad(where, `${at}.params`, 'left out with "says"', o.params);
    if (typeof o.says !== 'string') throw bad(where, `${at}.says`, 'a string', o.says);
    return says(o.says);
  }
  if (o.parallel !== undefined) {
    if (o.params !== undefined) {
      throw bad(where, `${at}.params`, 'given on each call of "parallel"', o.params);
    }
    if (!Array.isArray(o.parallel) || o.parallel.length === 0) {
      throw bad(where, `${at}.parallel`, 'a non-empty array of { "calls", "params" }', o.parallel);
    }
    return parallel(...o.parallel.map((call, i) => callOf(call, where, `${at}.parallel[${i}]`)));
  }
  return callOf(o, where, at);
}

function callOf(value: unknown, where: string, at: string): CallsAction {
  const o = object(value, where, at, ['calls', 'params']);
  if (typeof o.calls !== 'string') throw bad(where, `${at}.calls`, 'a tool name', o.calls);
  try {
    return calls(o.calls, (o.params ?? {}) as Record<string, unknown>);
  } catch (error) {
    if (!(error instanceof InvalidOptionError)) throw error;
    throw new InvalidOptionError(`${where}: ${at}: ${error.message}`);
  }
}

function promptOf(value: unknown, where: string, at: string): PromptMatch {
  if (typeof value === 'string') return value;
  const p = patterns(value);
  if (p instanceof RegExp || p === ANY) return p as PromptMatch;
  throw bad(where, at, 'a string, { "regex": "…", "flags": "…" } or { "any": true }', value);
}

/** What any() gives (the server does not import the mock binaries' module). */
const ANY: AnyValue = Object.freeze({ any: true as const });

/** `{ regex, flags }` → RegExp and `{ any: true }` → any(), anywhere in `value`. */
function patterns(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(patterns);
  if (typeof value !== 'object' || value === null) return value;
  const o = value as Record<string, unknown>;
  const keys = Object.keys(o);
  if (o.any === true && keys.length === 1) return ANY;
  if (
    typeof o.regex === 'string' &&
    keys.every((k) => k === 'regex' || k === 'flags') &&
    (o.flags === undefined || typeof o.flags === 'string')
  ) {
    try {
      return new RegExp(o.regex, (o.flags as string | undefined) ?? '');
    } catch (error) {
      throw new InvalidOptionError(
        `Expected { "regex": ${JSON.stringify(o.regex)} } to be a valid pattern: ${(error as Error).message}.`,
      );
    }
  }
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, patterns(v)]));
}

function object(
  value: unknown,
  where: string,
  at: string,
  keys: readonly string[] | undefined,
): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw bad(where, at, 'an object', value);
  }
  if (keys) {
    for (const key of Object.keys(value)) {
      if (!keys.includes(key)) {
        const guess = nearest(key, keys);
        throw new InvalidOptionError(
          `${where}: unknown key "${key}" in ${at}.${guess ? ` Did you mean "${guess}"?` : ''} Valid keys: ${keys.join(', ')}.`,
        );
      }
    }
  }
  return value as Record<string, unknown>;
}

function bad(where: string, at: string, expected: string, got: unknown): InvalidOptionError {
  return new InvalidOptionError(
    `${where}: expected ${at} to be ${expected}, got ${describeValue(got)}.`,
  );
}

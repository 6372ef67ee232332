import { argFits, describeArg } from '../internal/matcher.js';
import type { WireArg, WireMatch } from './types.js';

/**
 * Routing (requirement MB-13): which calls a response's `match` fits. A
 * matcher is stored as plain JSON (a RegExp as `{ regex, flags }`, `any()`
 * as `{ any: true }`), so the runner and a hand-written queue agree on it.
 */

/** What a matcher looks at in a call. */
export interface RoutedCall {
  argv: readonly string[];
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
}

/**
 * Whether `match` fits the call; a response without `match` fits every call.
 * The same test as `mismatch()`, without building a message: a call tests
 * every routed response it passes on its way to its own.
 */
export function fits(match: WireMatch | undefined, call: RoutedCall): boolean {
  if (match === undefined) return true;
  const { argv } = call;
  const expected = match.args ?? match.argsPrefix;
  if (expected) {
    if (match.args && argv.length !== expected.length) return false;
    for (let i = 0; i < expected.length; i++) {
      if (!argFits(expected[i] as WireArg, argv[i])) return false;
    }
  }
  if (match.cwd !== undefined && !argFits(match.cwd, call.cwd)) return false;
  if (match.env) {
    for (const key in match.env) {
      const m = match.env[key] as WireArg | null;
      const got = envValue(call.env, key);
      if (m === null ? got !== undefined : !argFits(m, got)) return false;
    }
  }
  return true;
}

/** An env var of the call: its own, never a property `process.env` inherits (`constructor`). */
export function envValue(
  env: Readonly<Record<string, string | undefined>>,
  key: string,
): string | undefined {
  return Object.hasOwn(env, key) ? env[key] : undefined;
}

/**
 * Why `match` does not fit the call, in words (`arg 2: expected "push", got
 * "pull"`), or `undefined` when it fits. Arguments are counted from 1, as a
 * shell user counts them after the command name.
 */
export function mismatch(match: WireMatch, call: RoutedCall): string | undefined {
  const { argv } = call;
  const expected = match.args ?? match.argsPrefix;
  if (expected) {
    for (let i = 0; i < expected.length; i++) {
      const m = expected[i] as WireArg;
      const got = argv[i];
      if (!argFits(m, got)) {
        return `arg ${i + 1}: expected ${describeArg(m)}, got ${got === undefined ? 'nothing' : JSON.stringify(got)}`;
      }
    }
    if (match.args && argv.length > expected.length) {
      return `expected ${expected.length} arg${expected.length === 1 ? '' : 's'}, got ${argv.length} (extra: ${JSON.stringify(argv[expected.length])})`;
    }
  }
  if (match.cwd !== undefined && !argFits(match.cwd, call.cwd)) {
    return `cwd: expected ${describeArg(match.cwd)}, got ${JSON.stringify(call.cwd)}`;
  }
  if (match.env) {
    for (const [key, m] of Object.entries(match.env)) {
      const got = envValue(call.env, key);
      if (m === null ? got !== undefined : !argFits(m, got)) {
        return `env ${key}: expected ${m === null ? 'it unset' : describeArg(m)}, got ${got === undefined ? 'it unset' : JSON.stringify(got)}`;
      }
    }
  }
  return undefined;
}

/** A whole matcher, for messages: `args ["push", any()]`. */
export function describeMatch(match: WireMatch | undefined): string {
  if (match === undefined) return 'any call';
  const parts: string[] = [];
  if (match.args) parts.push(`args [${match.args.map(describeArg).join(', ')}]`);
  if (match.argsPrefix) parts.push(`argsPrefix [${match.argsPrefix.map(describeArg).join(', ')}]`);
  if (match.cwd !== undefined) parts.push(`cwd ${describeArg(match.cwd)}`);
  if (match.env) {
    const env = Object.entries(match.env).map(
      ([k, m]) => `${k}=${m === null ? '(unset)' : describeArg(m)}`,
    );
    parts.push(`env {${env.join(', ')}}`);
  }
  return parts.join(', ');
}

/**
 * How close a matcher came to the call, for naming the closest response in
 * a diagnostic: the number of leading args that fit (then cwd and env).
 */
export function closeness(match: WireMatch | undefined, call: RoutedCall): number {
  if (match === undefined) return Number.MAX_SAFE_INTEGER;
  const expected = match.args ?? match.argsPrefix ?? [];
  let score = 0;
  for (let i = 0; i < expected.length; i++) {
    if (!argFits(expected[i] as WireArg, call.argv[i])) break;
    score += 2;
  }
  if (match.cwd === undefined || argFits(match.cwd, call.cwd)) score += 1;
  return score;
}

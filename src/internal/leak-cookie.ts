import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The leak sanitizer's per-test cookie (requirement LK-01): while a
 * sanitizer scope is open, `process.env[LEAK_COOKIE_VAR]` holds a value
 * unique to that test, and every process shimkit starts carries it — also
 * those started with an env that does not inherit `process.env` (a
 * sandbox's, an explicit `env` option, a mock's passthrough). The scan
 * (src/leaks/) finds what is left by it. Ground floor: the runner imports it.
 *
 * Tests that run at the same time in one process (`test.concurrent`) share
 * `process.env`, so their scopes are told apart by an async context
 * instead (LK-05): `runWithLeakCookie()` runs a test in one, and what
 * shimkit starts inside it carries that test's cookie. The context is made
 * only when the first concurrent scope opens: sequential tests pay nothing
 * for it (LK-08: no async hooks).
 */

/** The env var that carries the cookie. */
export const LEAK_COOKIE_VAR = 'SHIMKIT_LEAK_COOKIE';

let context: AsyncLocalStorage<string> | undefined;

/** The cookie of the open sanitizer scope, if any: a concurrent test's own first, else the env's. */
export function currentLeakCookie(source: NodeJS.ProcessEnv = process.env): string | undefined {
  const own = context?.getStore();
  if (own !== undefined && source === process.env) return own;
  const value = source[LEAK_COOKIE_VAR];
  return value === undefined || value === '' ? undefined : value;
}

/** Run `fn` with `cookie` as the current cookie of everything it does, awaited or not. */
export function runWithLeakCookie<T>(cookie: string, fn: () => T): T {
  context ??= new AsyncLocalStorage<string>();
  return context.run(cookie, fn);
}

/**
 * `env` with the cookie of `source` (default `process.env`, or the running
 * concurrent test's) added in place, unless `env` names another value
 * itself (one copied from `process.env` is replaced: a concurrent test's
 * cookie is not there); `env` unchanged when no scope is open. Returns `env`.
 */
export function addLeakCookie<T extends Record<string, string | undefined>>(
  env: T,
  source: NodeJS.ProcessEnv = process.env,
): T {
  const cookie = currentLeakCookie(source);
  const given = env[LEAK_COOKIE_VAR];
  if (cookie !== undefined && (given === undefined || given === process.env[LEAK_COOKIE_VAR])) {
    (env as Record<string, string>)[LEAK_COOKIE_VAR] = cookie;
  }
  return env;
}

/**
 * The leak sanitizer's per-test cookie (requirement LK-01): while a
 * sanitizer scope is open, `process.env[LEAK_COOKIE_VAR]` holds a value
 * unique to that test, and every process shimkit starts carries it — also
 * those started with an env that does not inherit `process.env` (a
 * sandbox's, an explicit `env` option, a mock's passthrough). The scan
 * (src/leaks/) finds what is left by it. Ground floor: the runner imports it.
 */

/** The env var that carries the cookie. */
export const LEAK_COOKIE_VAR = 'SHIMKIT_LEAK_COOKIE';

/** The cookie of the open sanitizer scope, if any. */
export function currentLeakCookie(source: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = source[LEAK_COOKIE_VAR];
  return value === undefined || value === '' ? undefined : value;
}

/**
 * `env` with the cookie of `source` (default `process.env`) added in place,
 * unless `env` names the var itself; `env` unchanged when no scope is open.
 * Returns `env`.
 */
export function addLeakCookie<T extends Record<string, string | undefined>>(
  env: T,
  source: NodeJS.ProcessEnv = process.env,
): T {
  const cookie = currentLeakCookie(source);
  if (cookie !== undefined && env[LEAK_COOKIE_VAR] === undefined) {
    (env as Record<string, string>)[LEAK_COOKIE_VAR] = cookie;
  }
  return env;
}

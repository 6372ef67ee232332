import { describeValue } from '../internal/describe.js';
import { InvalidOptionError } from '../internal/errors.js';

/**
 * `api.env()` (HT-01): a copy of the base env (`process.env` when called)
 * with the variables the common SDKs read pointed at the server, and the
 * loopback names added to NO_PROXY/no_proxy (python urllib and curl honour
 * an HTTP proxy for 127.0.0.1 too, unless told not to). The `env` option
 * overrides any of them by name: a string is the value (`'{url}'` in it
 * replaced), null leaves the variable as the base has it (NO_PROXY and
 * no_proxy are two names: each is overridden on its own).
 */

/** The defaults `env()` sets; `'{url}'` is the server's URL. */
export const DEFAULT_SERVER_ENV: Readonly<Record<string, string>> = {
  OPENAI_BASE_URL: '{url}/v1',
  ANTHROPIC_BASE_URL: '{url}',
  OPENAI_API_KEY: 'shimkit-test',
  ANTHROPIC_API_KEY: 'shimkit-test',
};

/**
 * The defaults that are API keys. While a cassette records, the requests go
 * on to the real API, which must get the caller's real key: `env()` then
 * keeps the base's own non-empty value of these, and sets the placeholder
 * only where the base has none.
 */
export const SERVER_KEY_VARS: readonly string[] = ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY'];

/**
 * What NO_PROXY must hold for a loopback server to be reached directly, for
 * `listen: { host: '::1' }` too: curl (7.88) matches the URL's host `[::1]`
 * against `::1` and not `[::1]`; python's urllib (proxy_bypass_environment)
 * the other way round. Both are added.
 */
const LOOPBACK = ['127.0.0.1', 'localhost', '::1', '[::1]'];

/**
 * `recording`: the server passes requests to a cassette's upstream (mode
 * `record` or `record-missing`, `auto` without a file), so the API keys of
 * `base` are kept (SERVER_KEY_VARS) unless the `env` option sets them.
 * `token` (`requireToken`): the keys' default is the server's token.
 */
export function serverEnv(
  url: string,
  overrides: Readonly<Record<string, string | null>>,
  base: NodeJS.ProcessEnv = process.env,
  options: { recording?: boolean; token?: string | undefined } = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value !== undefined) env[name] = value;
  }
  const defaults: Record<string, string> = { ...DEFAULT_SERVER_ENV };
  if (options.token !== undefined) {
    defaults.OPENAI_API_KEY = options.token;
    defaults.ANTHROPIC_API_KEY = options.token;
  }
  for (const [name, value] of Object.entries({ ...defaults, ...overrides })) {
    if (value === null) continue;
    const keep =
      options.recording === true &&
      SERVER_KEY_VARS.includes(name) &&
      !Object.hasOwn(overrides, name) &&
      (base[name] ?? '') !== '';
    if (!keep) env[name] = value.replaceAll('{url}', url);
  }
  for (const name of ['NO_PROXY', 'no_proxy']) {
    // Overridden: a string is the value as given; null leaves the base's value (or none) as it is.
    if (Object.hasOwn(overrides, name)) continue;
    const have = (env[name] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    env[name] = [...have, ...LOOPBACK.filter((h) => !have.includes(h))].join(',');
  }
  return env;
}

/** `env(base)`'s argument checked: an object of names to strings (or undefined), as `process.env` is. */
export function checkEnvBase(base: unknown, where: string): void {
  const expected = 'an env object such as process.env (variable names to strings)';
  if (typeof base !== 'object' || base === null || Array.isArray(base)) {
    throw new InvalidOptionError(
      `Expected the \`base\` argument of ${where} to be ${expected}, or nothing (process.env), got ${describeValue(base)}.`,
    );
  }
  for (const [name, value] of Object.entries(base)) {
    if (value !== undefined && typeof value !== 'string') {
      throw new InvalidOptionError(
        `Expected the \`base\` argument of ${where} to be ${expected}; its ${JSON.stringify(name)} is ${describeValue(value)}.`,
      );
    }
  }
}

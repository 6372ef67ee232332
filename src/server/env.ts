/**
 * `api.env()` (HT-01): a copy of the base env (`process.env` when called)
 * with the variables the common SDKs read pointed at the server, and the
 * loopback names added to NO_PROXY/no_proxy (python urllib and curl honour
 * an HTTP proxy for 127.0.0.1 too, unless told not to).
 */

/** The defaults `env()` sets; `'{url}'` is the server's URL. */
export const DEFAULT_SERVER_ENV: Readonly<Record<string, string>> = {
  OPENAI_BASE_URL: '{url}/v1',
  ANTHROPIC_BASE_URL: '{url}',
  OPENAI_API_KEY: 'shimkit-test',
  ANTHROPIC_API_KEY: 'shimkit-test',
};

const LOOPBACK = ['127.0.0.1', 'localhost'];

export function serverEnv(
  url: string,
  overrides: Readonly<Record<string, string | null>>,
  base: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value !== undefined) env[name] = value;
  }
  for (const [name, value] of Object.entries({ ...DEFAULT_SERVER_ENV, ...overrides })) {
    if (value !== null) env[name] = value.replaceAll('{url}', url);
  }
  for (const name of ['NO_PROXY', 'no_proxy']) {
    const have = (env[name] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    env[name] = [...have, ...LOOPBACK.filter((h) => !have.includes(h))].join(',');
  }
  return env;
}

import { InvalidOptionError } from '../internal/errors.js';
import { type Env, pathKey } from '../internal/path-env.js';
import { allowlisted, findKey, isolatedEnv } from './env.js';

/**
 * requirement SP-09: isolation is never lost silently. With `sandbox`, the `env`
 * option is for the few vars a test sets; an env that looks like a copy of
 * the host's — most often a mock's `env()`, which is `process.env` with the
 * mock dir first on PATH — would put the host's HOME and every host var,
 * secrets included, back over the sandbox env. So it throws, pointing at
 * `sandbox.use(mock)`, rather than guess which of its vars were meant.
 */

/**
 * Why `overrides` looks like a copy of `hostEnv`, or undefined when it does
 * not: it gives a var the sandbox isolates (HOME, USERPROFILE, XDG_*, TMPDIR,
 * TMP, TEMP, APPDATA, LOCALAPPDATA, GIT_CONFIG_*) the host's value instead of
 * the sandbox's, or it carries the host's values for more than half (and at
 * least two) of the host's vars outside the sandbox allowlist.
 */
export function hostCopyReason(
  overrides: Env,
  sandboxEnv: Record<string, string>,
  hostEnv: Env,
  platform: NodeJS.Platform,
): string | undefined {
  const valueIn = (env: Env, name: string) => {
    const key = findKey(env, name, platform);
    return key === undefined ? undefined : env[key];
  };
  for (const name of Object.keys(isolatedEnv('', '', platform))) {
    const value = valueIn(overrides, name);
    const host = valueIn(hostEnv, name);
    if (value !== undefined && value === host && value !== valueIn(sandboxEnv, name)) {
      return `it sets ${name} to the host's ${JSON.stringify(host)}`;
    }
  }
  const shared = new Set(Object.keys(allowlisted(hostEnv, platform)));
  shared.add(pathKey(hostEnv, platform));
  const hostOnly = Object.keys(hostEnv).filter((k) => hostEnv[k] !== undefined && !shared.has(k));
  const copied = hostOnly.filter((k) => valueIn(overrides, k) === hostEnv[k]);
  if (copied.length >= 2 && copied.length * 2 > hostOnly.length) {
    return `it carries the host's values for ${copied.length} of the ${hostOnly.length} host vars outside the sandbox allowlist`;
  }
  return undefined;
}

/** Throw `InvalidOptionError` when `overrides` (the `env` option of `where`) looks like a host env copy. */
export function assertIsolated(
  overrides: Env,
  sandboxEnv: Record<string, string>,
  hostEnv: Env,
  platform: NodeJS.Platform,
  where: string,
): void {
  const reason = hostCopyReason(overrides, sandboxEnv, hostEnv, platform);
  if (reason === undefined) return;
  throw new InvalidOptionError(
    `The \`env\` option of ${where} looks like a copy of the host env (${reason}); with \`sandbox\` it would undo the sandbox's isolation, ` +
      "showing the program the host's home and every host var, secrets included. " +
      'To put a mock on the sandbox PATH, call sandbox.use(mock) instead of passing mock.env(). ' +
      "Pass in `env` only the vars you mean to set (e.g. { CI: '1' }), and a host value you do want with sandbox.setEnv(name, value).",
  );
}

import { join } from 'node:path';
import type { Env } from '../internal/path-env.js';

/**
 * The sandbox env (requirement SP-01), as pure functions of `platform` and the host
 * env so the Windows branch is tested on any OS. It starts empty, copies a
 * short allowlist from the host, then points every per-user dir into the
 * sandbox and cuts git off from the host's config.
 */

/** Host vars copied on POSIX, plus every `LC_*` var. Exact, case-sensitive keys. */
export const POSIX_ALLOWLIST: readonly string[] = ['PATH', 'LANG', 'TZ', 'TERM', 'SHELL'];

/** Host vars copied on Windows, matched case-insensitively and copied under the host's spelling. */
export const WINDOWS_ALLOWLIST: readonly string[] = [
  'PATH',
  'SystemRoot',
  'ComSpec',
  'PATHEXT',
  'WINDIR',
];

export interface SandboxEnvInput {
  platform: NodeJS.Platform;
  hostEnv: Env;
  /** The sandbox home dir. */
  home: string;
  /** The sandbox temp dir. */
  tmp: string;
}

/** Allowlisted host vars + the sandbox's own dirs + git isolation. */
export function buildSandboxEnv(input: SandboxEnvInput): Record<string, string> {
  return {
    ...allowlisted(input.hostEnv, input.platform),
    ...isolatedEnv(input.home, input.tmp, input.platform),
  };
}

/** The vars a sandbox sets itself, whatever the host has. */
export function isolatedEnv(
  home: string,
  tmp: string,
  platform: NodeJS.Platform,
): Record<string, string> {
  return {
    HOME: home,
    USERPROFILE: home,
    ...homeDirs(home, platform),
    TMPDIR: tmp,
    TMP: tmp,
    TEMP: tmp,
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: gitConfigPath(home),
  };
}

/** Per-user dirs inside the sandbox home, by the var that names them. The sandbox creates them. */
export function homeDirs(home: string, platform: NodeJS.Platform): Record<string, string> {
  return {
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    ...(platform === 'win32'
      ? {
          APPDATA: join(home, 'AppData', 'Roaming'),
          LOCALAPPDATA: join(home, 'AppData', 'Local'),
        }
      : {}),
  };
}

/** The empty file git reads as its global config in the sandbox. */
export function gitConfigPath(home: string): string {
  return join(home, '.gitconfig');
}

/** The allowlisted vars of `hostEnv`, keys spelled as in `hostEnv`. */
export function allowlisted(hostEnv: Env, platform: NodeJS.Platform): Record<string, string> {
  const picked: Record<string, string> = {};
  if (platform === 'win32') {
    for (const name of WINDOWS_ALLOWLIST) {
      const key = findKey(hostEnv, name, platform);
      const value = key === undefined ? undefined : hostEnv[key];
      if (key !== undefined && value !== undefined) picked[key] = value;
    }
    return picked;
  }
  for (const [key, value] of Object.entries(hostEnv)) {
    if (value === undefined) continue;
    if (POSIX_ALLOWLIST.includes(key) || key.startsWith('LC_')) picked[key] = value;
  }
  return picked;
}

/**
 * The key `name` lives under: itself on POSIX; on Windows, where keys are
 * case-insensitive, the last spelling with a defined value (as `pathKey` does).
 */
export function findKey(env: Env, name: string, platform: NodeJS.Platform): string | undefined {
  if (platform !== 'win32') return Object.hasOwn(env, name) ? name : undefined;
  const upper = name.toUpperCase();
  let found: string | undefined;
  for (const key of Object.keys(env)) {
    if (key.toUpperCase() !== upper) continue;
    if (env[key] !== undefined) found = key;
    else found ??= key;
  }
  return found;
}

/**
 * Set (or with `undefined`, remove) `key` in `env` in place. On Windows an
 * existing var of any spelling is replaced under its existing spelling, so
 * there is never a `Path` and a `PATH`.
 */
export function setVar(
  env: Record<string, string>,
  key: string,
  value: string | undefined,
  platform: NodeJS.Platform,
): void {
  let target = key;
  if (platform === 'win32') {
    const upper = key.toUpperCase();
    const spellings = Object.keys(env).filter((k) => k.toUpperCase() === upper);
    target = spellings[0] ?? key;
    for (const spelling of spellings) delete env[spelling];
  }
  if (value === undefined) delete env[target];
  else env[target] = value;
}

import { existsSync } from 'node:fs';
import { dirname, join, posix, win32 } from 'node:path';
import type { Env } from '../internal/path-env.js';
import { PackedInstallError } from './errors.js';

/**
 * The npm that `verifyPackedInstall()` runs: the npm-cli.js of the npm that
 * came with this Node, run by this Node's own executable, so no `npm.cmd`
 * and no PATH lookup is involved on any platform.
 */
export interface NpmLocation {
  node: string;
  cli: string;
}

export interface FindNpmInput {
  execPath: string;
  platform: NodeJS.Platform;
  env: Env;
  exists?: (path: string) => boolean;
}

/** Where npm-cli.js is: beside this Node (its install layout per platform), else `npm_execpath`. */
export function findNpm(input: FindNpmInput): NpmLocation {
  const exists = input.exists ?? existsSync;
  const path = input.platform === 'win32' ? win32 : posix;
  const bin = path.dirname(input.execPath);
  const candidates =
    input.platform === 'win32'
      ? [path.join(bin, 'node_modules', 'npm', 'bin', 'npm-cli.js')]
      : [
          path.join(bin, '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js'),
          path.join(bin, 'node_modules', 'npm', 'bin', 'npm-cli.js'),
        ];
  const execpath = input.env.npm_execpath;
  if (execpath && /npm-cli\.js$/.test(execpath)) candidates.push(execpath);
  const cli = candidates.map((c) => path.normalize(c)).find((c) => exists(c));
  if (!cli) {
    throw new PackedInstallError(
      `verifyPackedInstall() cannot find npm: none of ${candidates.map((c) => `"${path.normalize(c)}"`).join(', ')} exists. It runs the npm that comes with the Node at ${input.execPath}; install Node with its npm (or run under \`npm test\`, which sets npm_execpath).`,
    );
  }
  return { node: input.execPath, cli };
}

/** The files and dirs of one hermetic npm: all inside `dir`. */
export interface NpmHome {
  /** Its cache (`--cache`); logs go to `_logs` in it. */
  cache: string;
  /** Its user config (`--userconfig`), written by `writeNpmConfig`. */
  userconfig: string;
  /** Its global config (`--globalconfig`): empty. */
  globalconfig: string;
}

export function npmHome(dir: string): NpmHome {
  return {
    cache: join(dir, 'npm-cache'),
    userconfig: join(dir, 'npmrc'),
    globalconfig: join(dir, 'npm-global', 'npmrc'),
  };
}

/** The flags every npm run gets: its own config and cache, nothing that phones home. */
export function npmFlags(home: NpmHome): string[] {
  return [
    '--userconfig',
    home.userconfig,
    '--globalconfig',
    home.globalconfig,
    '--cache',
    home.cache,
    '--no-update-notifier',
    '--no-audit',
    '--no-fund',
  ];
}

/** The user config file: the registry, then the caller's `npmConfig`, as `key=value` lines. */
export function npmrcText(registry: string | undefined, config: Record<string, string>): string {
  const lines = [
    '# written by shimkit verifyPackedInstall(): the only npm config this install reads',
  ];
  if (registry) lines.push(`registry=${registry}`);
  for (const [key, value] of Object.entries(config)) lines.push(`${key}=${value}`);
  return `${lines.join('\n')}\n`;
}

/**
 * The env keys to remove so the host's npm config cannot reach in: every
 * `npm_config_*` (npm sets them for the scripts it runs, and reads them
 * back), and the rest of what `npm test` exports (`npm_lifecycle_event` …).
 */
export function npmEnvKeys(env: Env): string[] {
  return Object.keys(env).filter((key) => /^npm_/i.test(key));
}

/** The dir npm-cli.js lives in, for messages. */
export function npmDir(npm: NpmLocation): string {
  return dirname(dirname(npm.cli));
}

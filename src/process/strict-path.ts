import {
  chmodSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { InvalidOptionError } from '../internal/errors.js';
import { type Env, pathKey } from '../internal/path-env.js';
import { shQuote } from '../internal/sh-quote.js';
import { commandCandidates, findCommand } from './which.js';

/**
 * A sandbox PATH that runs only mocked and allowed commands (requirement
 * MB-23, `createSandbox({ commands: 'mocked-only', allow })`). The sandbox
 * PATH becomes two dirs of its own, after the `use()`d mock dirs:
 *
 * - `allowed/`: a symlink to each allowed command, as found on the host PATH
 *   when the sandbox is made;
 * - `refused/`: a hard link of one small sh script for every other command
 *   name on the host PATH. Run by any of those names, it prints
 *   `shimkit: curl is not mocked and not allowed in this sandbox …`, records
 *   the name in `refused.log`, and exits 127, as a missing command does.
 *
 * A command on no host PATH dir is not found at all, as it would not be
 * anyway. Only lookups through this PATH are refused: a command called by
 * absolute path, or looked up with PATH removed from the env (`env -i`,
 * libc's `execvp`, Python, Node) or with `command -p`, is found in the
 * host's default dirs (`/bin:/usr/bin`) and runs (documented in the README,
 * tested in test/process/strict-path.test.ts).
 */
export interface StrictPath {
  /** The PATH value: allowed, then refused. */
  path: string;
  /** The names refused so far, in call order. */
  refused(): string[];
  /** Stop refusing `name` (it is mocked): an unavailable mock is then not found at all. */
  unrefuse(name: string): void;
  /** Stop refusing every command name in `dir` (a mock dir on the PATH), hidden shims included. */
  unrefuseDir(dir: string): void;
}

export function makeStrictPath(
  root: string,
  allow: readonly string[],
  hostEnv: Env,
  where: string,
): StrictPath {
  const allowedDir = join(root, 'allowed');
  const refusedDir = join(root, 'refused');
  const log = join(root, 'refused.log');
  mkdirSync(allowedDir, { mode: 0o700 });
  mkdirSync(refusedDir, { mode: 0o700 });
  for (const name of allow) {
    const found = findCommand(name, hostEnv, root, 'linux');
    if (found === undefined) {
      const { dirs } = commandCandidates(name, hostEnv, root, 'linux');
      throw new InvalidOptionError(
        `${where}: \`allow\` names ${JSON.stringify(name)}, which is not on the host PATH (searched ${dirs.join(', ') || 'nothing: PATH is empty'}). Install it, or leave it out of \`allow\`.`,
      );
    }
    symlinkSync(found, join(allowedDir, name));
  }
  const script = join(root, 'refuse.sh');
  writeFileSync(script, refusalScript(log), { mode: 0o700 });
  chmodSync(script, 0o700);
  const allowed = new Set(allow);
  const seen = new Set<string>();
  for (const dir of hostPathDirs(hostEnv)) {
    for (const name of namesIn(dir)) {
      if (allowed.has(name) || seen.has(name)) continue;
      seen.add(name);
      linkSync(script, join(refusedDir, name));
    }
  }
  const unrefuse = (name: string) => {
    if (!name.includes('/') && name !== '.' && name !== '..' && name !== '') {
      rmSync(join(refusedDir, name), { force: true });
    }
  };
  return {
    path: `${allowedDir}:${refusedDir}`,
    refused: () => readRefused(log),
    unrefuse,
    unrefuseDir: (dir) => {
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        return;
      }
      for (const name of names) {
        // A shim moved aside by makeUnavailable() is `.<name>.unavailable`.
        unrefuse(/^\.(.+)\.unavailable$/.exec(name)?.[1] ?? name);
      }
    },
  };
}

/** What each refused name runs: say what happened and what to do, note it, exit 127. */
function refusalScript(log: string): string {
  return [
    '#!/bin/sh',
    '# shimkit: a command refused by a sandbox made with commands: "mocked-only".',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: sh parameter expansion, not a template
    'name=${0##*/}',
    `printf '%s\\n' "$name" >> ${shQuote(log)} 2>/dev/null`,
    `printf 'shimkit: %s is not mocked and not allowed in this sandbox (commands: "mocked-only"): mock it and sandbox.use() the mock, or add %s to \`allow\`.\\n' "$name" "'$name'" >&2`,
    'exit 127',
    '',
  ].join('\n');
}

function readRefused(log: string): string[] {
  try {
    return readFileSync(log, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

/** The host PATH dirs, each once (by real path: `/bin` is often `/usr/bin`). */
function hostPathDirs(hostEnv: Env): string[] {
  const value = hostEnv[pathKey(hostEnv, 'linux')] ?? '';
  const dirs: string[] = [];
  const real = new Set<string>();
  for (const dir of value.split(':')) {
    if (dir === '') continue;
    let resolved: string;
    try {
      resolved = realpathSync(dir);
    } catch {
      continue; // a PATH entry that does not exist
    }
    if (real.has(resolved)) continue;
    real.add(resolved);
    dirs.push(dir);
  }
  return dirs;
}

/** The names of the files in `dir` that could be run as commands. */
function namesIn(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((name) => {
    try {
      const stat = statSync(join(dir, name));
      return stat.isFile() && (stat.mode & 0o111) !== 0;
    } catch {
      return false; // a dangling link
    }
  });
}

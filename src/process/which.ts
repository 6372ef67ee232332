import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { type Env, pathDelimiter, pathKey } from '../internal/path-env.js';
import { findKey } from './env.js';

/**
 * Where the OS would look for `command`, in order: the file itself when it
 * names a path, else each PATH dir once (a repeated entry is searched, and
 * listed, only where it first appears; on Windows also the cwd first and each
 * PATHEXT extension). Pure, so the Windows branch is testable anywhere.
 */
export function commandCandidates(
  command: string,
  env: Env,
  cwd: string,
  platform: NodeJS.Platform,
): { dirs: string[]; files: string[] } {
  const p = platform === 'win32' ? path.win32 : path.posix;
  const hasSeparator = platform === 'win32' ? /[\\/]/.test(command) : command.includes('/');
  const extensions = platform === 'win32' ? windowsExtensions(command, env) : [''];
  if (hasSeparator) {
    const file = p.resolve(cwd, command);
    return { dirs: [p.dirname(file)], files: extensions.map((ext) => file + ext) };
  }
  // Without PATH, Node (libuv) searches the C library's default path; an empty PATH finds nothing.
  const value = env[pathKey(env, platform)] ?? (platform === 'win32' ? '' : '/usr/bin:/bin');
  const dirs = unique(
    (value === '' ? [] : value.split(pathDelimiter(platform)))
      .map((dir) => dir.replace(/^"(.*)"$/, '$1'))
      .map((dir) => (dir === '' ? cwd : p.resolve(cwd, dir))),
    platform,
  );
  // Windows (cmd.exe, and cross-spawn's lookup) tries the current dir first.
  if (platform === 'win32') dirs.unshift(cwd);
  const files = dirs.flatMap((dir) => extensions.map((ext) => p.join(dir, command + ext)));
  return { dirs: platform === 'win32' ? dirs.slice(1) : dirs, files };
}

/** `['']` when `command` already ends in a PATHEXT extension, else each extension to try. */
function windowsExtensions(command: string, env: Env): string[] {
  const key = findKey(env, 'PATHEXT', 'win32');
  const list = (key ? env[key] : undefined) ?? '.COM;.EXE;.BAT;.CMD';
  const extensions = list.split(';').filter(Boolean);
  const lower = command.toLowerCase();
  const has = extensions.some((ext) => lower.endsWith(ext.toLowerCase()));
  return has ? [''] : extensions;
}

/** The first candidate that is a runnable file, or undefined. */
export function findCommand(
  command: string,
  env: Env,
  cwd: string,
  platform: NodeJS.Platform,
): string | undefined {
  const { files } = commandCandidates(command, env, cwd, platform);
  return files.find((file) => isRunnable(file, platform));
}

/**
 * The candidates that are files but not executable (POSIX: no exec bit for
 * us), in search order: what to name when `findCommand` found nothing.
 */
export function notExecutable(
  command: string,
  env: Env,
  cwd: string,
  platform: NodeJS.Platform,
): string[] {
  if (platform === 'win32') return [];
  const { files } = commandCandidates(command, env, cwd, platform);
  return files.filter((file) => isFile(file) && !isRunnable(file, platform));
}

/** `dirs` without repeats, first occurrence kept (case-insensitive on Windows). */
function unique(dirs: string[], platform: NodeJS.Platform): string[] {
  const seen = new Set<string>();
  return dirs.filter((dir) => {
    const key = platform === 'win32' ? dir.toLowerCase() : dir;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

function isRunnable(file: string, platform: NodeJS.Platform): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    if (platform !== 'win32') accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

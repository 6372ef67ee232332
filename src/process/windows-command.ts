import path from 'node:path';
import type { Env } from '../internal/path-env.js';
import { findKey } from './env.js';

/**
 * How `run()` and `spawnProcess()` start a command on Windows, where Node
 * refuses to spawn `.cmd` and `.bat` files without a shell. An `.exe` or
 * `.com` is spawned directly (libuv quotes its arguments exactly). Anything
 * else goes through `cmd.exe /d /s /v:off /c "…"` with a command line built
 * here, as cross-spawn builds it, with two differences:
 *
 * - Backslashes are doubled correctly before a quote and at the end of an
 *   argument (cross-spawn 7 doubles only one, so `a\\"b` and a trailing
 *   `x\\` come out mangled).
 * - `/v:off`, so `!` stays literal even where delayed expansion is on by
 *   default.
 *
 * Like cross-spawn, the metacharacters of an argument are escaped twice for a
 * `.cmd` under `node_modules\.bin\` (npm's shims and shimkit's mock binaries),
 * which pass their arguments on through `%*` and so through cmd.exe a second
 * time; once for any other batch file.
 */

/** The characters cmd.exe treats specially outside quotes (cross-spawn's set). */
const CMD_META = /([()\][%!^"`<>&|;, *?])/g;
/** A batch file that passes `%*` on (npm's and shimkit's shims), as cross-spawn tells them. */
const CMD_SHIM = /node_modules[\\/]\.bin[\\/][^\\/]+\.cmd$/i;

/**
 * One argument quoted for the MSVC runtime's parser (which Node, Python and
 * Go use too): in double quotes, each `"` as `\"`, and the backslashes
 * before a quote or the closing quote doubled.
 */
export function quoteWindowsArg(arg: string): string {
  let quoted = '"';
  let backslashes = 0;
  for (const ch of arg) {
    if (ch === '\\') {
      backslashes += 1;
      continue;
    }
    quoted += '\\'.repeat(ch === '"' ? backslashes * 2 + 1 : backslashes) + ch;
    backslashes = 0;
  }
  return `${quoted}${'\\'.repeat(backslashes * 2)}"`;
}

/** `text` with each cmd.exe metacharacter preceded by `^`, `times` times over. */
export function cmdEscape(text: string, times: number): string {
  let escaped = text;
  for (let i = 0; i < times; i += 1) escaped = escaped.replace(CMD_META, '^$1');
  return escaped;
}

/** What to hand `child_process.spawn` for `command` (found at `file`) on Windows. */
export interface WindowsSpawn {
  file: string;
  args: string[];
  windowsVerbatimArguments: boolean;
}

/**
 * The spawn of `command` with `args` on Windows. `command` is what the
 * caller wrote (a bare name is looked up again by cmd.exe on the child's
 * PATH, so the command line never spells out the shim dir's path); `file`
 * is where it was found. `env` is the test process's, for `ComSpec`.
 */
export function windowsSpawn(
  command: string,
  args: readonly string[],
  file: string,
  env: Env,
): WindowsSpawn {
  if (/\.(exe|com)$/i.test(file)) return { file, args: [...args], windowsVerbatimArguments: false };
  const times = CMD_SHIM.test(file) ? 2 : 1;
  const line = [
    commandToken(command),
    ...args.map((arg) => cmdEscape(quoteWindowsArg(arg), times)),
  ].join(' ');
  const comspec = findKey(env, 'ComSpec', 'win32');
  return {
    file: (comspec && env[comspec]) || 'cmd.exe',
    args: ['/d', '/s', '/v:off', '/c', `"${line}"`],
    windowsVerbatimArguments: true,
  };
}

/**
 * The command as cmd.exe should read it: a path in double quotes unless it
 * holds `%` (which cmd.exe would expand inside quotes too), else every
 * metacharacter escaped.
 */
function commandToken(command: string): string {
  const normalized = /[\\/]/.test(command) ? path.win32.normalize(command) : command;
  if (!normalized.includes('%')) return `"${normalized}"`;
  return cmdEscape(normalized, 1);
}

import { isAbsolute, relative, sep } from 'node:path';
import { InvalidOptionError } from '../internal/errors.js';
import { shimTemplate } from '../internal/package-files.js';
import { shQuote } from '../internal/sh-quote.js';
import { posixMoveLines, windowsMoveLines } from './node-env.js';
import { cmdReadable } from './windows-layout.js';

/** What a shim needs to know: which Node, which runner, which state dir. */
export interface ShimTarget {
  name: string;
  nodePath: string;
  /** Options for that Node (see runner-flags.ts); plain option words, no quoting needed. */
  nodeFlags: readonly string[];
  runnerPath: string;
  stateDir: string;
  /** The dir the shim is written to. */
  shimDir: string;
  /** The bin dir's temp dir, which holds the shim dir and the state. */
  root: string;
}

/** The shim's file name: the command name itself, or `<name>.cmd` on Windows. */
export function shimFileName(name: string, platform: NodeJS.Platform): string {
  if (platform !== 'win32') return name;
  return /\.(cmd|bat)$/i.test(name) ? name : `${name}.cmd`;
}

/** A POSIX sh shim: `exec '<node>' '<runner>' '<state>' "$@"`. */
export function renderPosixShim(target: ShimTarget): string {
  return fill(shimTemplate('posix.sh'), target, shQuote).replace('@@MOVE_ENV@@', posixMoveLines());
}

/**
 * A Windows `.cmd` shim. cmd.exe reads it in the OEM code page, so a path
 * that is not printable ASCII (a temp dir under `C:\Users\Jürgen`) is named
 * from the shim's own location, `%~dp0`, which cmd.exe keeps in Unicode;
 * the runner and Node are made reachable inside the root for that (see
 * windows-layout.ts). Paths are put in double quotes (Windows paths cannot
 * contain `"`); inside them cmd.exe only expands `%`, so that is the one
 * character escaped (`%%`). The line that runs node has delayed expansion
 * off, so `!` in paths and arguments is literal.
 */
export function renderWindowsShim(target: ShimTarget): string {
  const quote = (value: string) => cmdPath(value, target);
  return fill(shimTemplate('windows.cmd'), target, quote).replace(
    '@@MOVE_ENV@@',
    windowsMoveLines(),
  );
}

/**
 * A path as the shim names it: absolute when cmd.exe can read it (escaping
 * `%`), else from the shim's own location (`"%~dp0..\..\state\git.1a2b"`)
 * for a path inside the root. `%~dp0` is the fallback, not the rule: Wine's
 * cmd.exe expands `%VAR%` again inside what `%~dp0` expands to.
 */
function cmdPath(value: string, target: ShimTarget): string {
  if (cmdReadable(value)) return cmdQuote(value);
  const inRoot = relative(target.root, value);
  if (inRoot !== '' && !inRoot.startsWith('..') && !isAbsolute(inRoot)) {
    const fromShim = relative(target.shimDir, value).split(sep).join('\\');
    if (cmdReadable(fromShim)) return `"%~dp0${fromShim.replaceAll('%', '%%')}"`;
  }
  throw new InvalidOptionError(
    `A Windows shim cannot name ${value}: cmd.exe reads .cmd files in the OEM code page, so a path outside the mock's temp dir must be printable ASCII.`,
  );
}

export function renderShim(target: ShimTarget, platform: NodeJS.Platform): string {
  return platform === 'win32' ? renderWindowsShim(target) : renderPosixShim(target);
}

function fill(template: string, target: ShimTarget, quote: (value: string) => string): string {
  return template
    .replace('@@NAME@@', JSON.stringify(target.name).replaceAll('%', '%%'))
    .replace('@@NODE@@', [quote(target.nodePath), ...target.nodeFlags].join(' '))
    .replace('@@RUNNER@@', quote(target.runnerPath))
    .replace('@@STATE@@', quote(target.stateDir));
}

export function cmdQuote(value: string): string {
  if (value.includes('"')) {
    throw new InvalidOptionError(
      `A Windows shim cannot refer to a path containing a double quote: ${value}`,
    );
  }
  return `"${value.replaceAll('%', '%%')}"`;
}

export { shQuote };

import { InvalidOptionError } from '../internal/errors.js';
import { shimTemplate } from '../internal/package-files.js';
import { posixMoveLines, windowsMoveLines } from './node-env.js';

/** What a shim needs to know: which Node, which runner, which state dir. */
export interface ShimTarget {
  name: string;
  nodePath: string;
  /** Options for that Node (see runner-flags.ts); plain option words, no quoting needed. */
  nodeFlags: readonly string[];
  runnerPath: string;
  stateDir: string;
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
 * A Windows `.cmd` shim. Paths are put in double quotes (Windows paths cannot
 * contain `"`); inside them cmd.exe only expands `%`, so that is the one
 * character escaped (`%%`). The line that runs node has delayed expansion
 * off, so `!` in paths and arguments is literal.
 */
export function renderWindowsShim(target: ShimTarget): string {
  return fill(shimTemplate('windows.cmd'), target, cmdQuote).replace(
    '@@MOVE_ENV@@',
    windowsMoveLines(),
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

/** Single-quote for POSIX sh: everything is literal except `'`, written as `'\''`. */
export function shQuote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

export function cmdQuote(value: string): string {
  if (value.includes('"')) {
    throw new InvalidOptionError(
      `A Windows shim cannot refer to a path containing a double quote: ${value}`,
    );
  }
  return `"${value.replaceAll('%', '%%')}"`;
}

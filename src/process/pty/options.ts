import { checkOptionKeys, optionError } from '../../internal/options.js';
import type { Env } from '../../internal/path-env.js';
import { findCommand } from '../which.js';
import { PtyUnavailableError } from './errors.js';

/** The `pty` option of `spawnProcess()`: run the program on a pseudo-terminal of this size. */
export interface PtyOptions {
  /**
   * Columns of the terminal.
   * @default 80
   */
  cols?: number;
  /**
   * Rows of the terminal.
   * @default 24
   */
  rows?: number;
}

/** The PTY backends: the python3 helper (`shims/pty.py`). */
export type PtyBackendName = 'python';

/** The `pty` option after checking: a size and the backend found for it. */
export interface ResolvedPty {
  cols: number;
  rows: number;
  backend: PtyBackendName;
  /** The python3 that runs the helper. */
  python: string;
}

/**
 * The largest size accepted, in columns and in rows: the screen model keeps
 * every cell (10,000 × 10,000 took 1.3 GB), and no terminal is that big.
 */
export const MAX_PTY_SIZE = 1000;

/** How the environment is probed; tests pass their own. */
export interface PtyProbe {
  platform: NodeJS.Platform;
  hostEnv: Env;
  /** Whether a file exists (the fixed python3 paths). */
  exists(file: string): boolean;
}

/** Check the size and find the backend, or throw `PtyUnavailableError` saying what to install. */
export function resolvePty(value: unknown, where: string, probe: PtyProbe): ResolvedPty {
  if (value === null || Array.isArray(value) || (typeof value !== 'object' && value !== true)) {
    throw optionError(where, 'pty', 'true or { cols, rows }', value);
  }
  const o: PtyOptions =
    value === true ? {} : checkOptionKeys(value as PtyOptions, ['cols', 'rows'], where);
  const size = (key: 'cols' | 'rows', fallback: number): number => {
    const n = o[key] ?? fallback;
    if (!Number.isInteger(n) || n < 1 || n > MAX_PTY_SIZE) {
      throw optionError(where, `pty.${key}`, `an integer from 1 to ${MAX_PTY_SIZE}`, o[key]);
    }
    return n;
  };
  const cols = size('cols', 80);
  const rows = size('rows', 24);
  return { cols, rows, backend: 'python', python: findBackend(where, probe) };
}

/** The python3 that runs the helper, or a `PtyUnavailableError` saying what is missing. */
function findBackend(where: string, probe: PtyProbe): string {
  if (probe.platform === 'win32') {
    throw new PtyUnavailableError(
      `${where} cannot run on a pseudo-terminal on Windows: shimkit's PTY backend is a python3 helper for POSIX, and a ConPTY backend is not built yet. Spawn it without \`pty\` on Windows (skip the test there).`,
    );
  }
  const python = findPython(probe);
  if (python) return python;
  // No script(1) fallback: it has no way to resize the terminal, and its
  // drain at exit is not the helper's (read to EIO), so the no-lost-tail
  // guarantee would not hold (docs/decisions/012-pty.md). Say what to install.
  throw new PtyUnavailableError(
    `${where} cannot run on a pseudo-terminal here: the PTY backend needs python3, and none was found (looked in /usr/bin, /usr/local/bin, /opt/homebrew/bin and the PATH). Install python3: \`apt-get install -y --no-install-recommends python3\` on Debian and Ubuntu (node:*-slim images; python3-minimal alone lacks its termios module), \`apk add python3\` on Alpine, \`dnf install -y python3\` on Fedora and RHEL.`,
  );
}

/**
 * The host's python3: a fixed system path first, so that a version manager's
 * shim (pyenv's costs ~60 ms a start) or a mock on the PATH is not what runs
 * the helper; else the test process's PATH.
 */
export function findPython(probe: PtyProbe): string | undefined {
  for (const file of ['/usr/bin/python3', '/usr/local/bin/python3', '/opt/homebrew/bin/python3']) {
    if (probe.exists(file)) return file;
  }
  return findCommand('python3', probe.hostEnv, '/', probe.platform);
}

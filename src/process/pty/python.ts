import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { packageFile } from '../../internal/package-files.js';
import type { ResolvedPty } from './options.js';

/** What the helper needs to start the program. */
export interface PtyLaunch {
  /** The program, found on the child's PATH. */
  file: string;
  /** The command as given: the program's argv[0]. */
  command: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  drainMs: number;
  pty: ResolvedPty;
}

/**
 * Start the program on a new PTY through `shims/pty.py` (the zero-dependency
 * backend), in its own session and process group like any spawnProcess child.
 * fd 0 is what is typed, fd 1 the terminal's output, fd 2 the helper's own
 * errors, fd 3 its control channel (resize). `-I -S`: the program's
 * `PYTHON*` vars and site packages do not change how the helper runs.
 */
export function spawnPythonPty(launch: PtyLaunch): ChildProcess {
  const { pty } = launch;
  const helper = packageFile(join('shims', 'pty.py'));
  return spawn(
    pty.python,
    [
      '-I',
      '-S',
      helper,
      String(pty.cols),
      String(pty.rows),
      String(launch.drainMs),
      launch.file,
      launch.command,
      ...launch.args,
    ],
    {
      cwd: launch.cwd,
      env: launch.env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    },
  );
}

/** The control line that resizes the terminal (the kernel then sends SIGWINCH). */
export function resizeCommand(cols: number, rows: number): string {
  return `resize ${cols} ${rows}\n`;
}

import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { onProcessExit } from '../../internal/exit-cleanup.js';
import { packageFile } from '../../internal/package-files.js';
import { isDeadState, readStat } from '../../internal/proc.js';
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
 * The launch as `shims/pty.py` reads it on fd 3: a field count, then each
 * field ended by a NUL (no field can hold one: Node refuses NUL in argv and
 * env, and so does `spawnProcess`).
 */
export function encodeLaunch(launch: PtyLaunch): Buffer {
  const fields = [
    String(launch.pty.cols),
    String(launch.pty.rows),
    String(launch.drainMs),
    launch.cwd,
    launch.file,
    String(launch.args.length + 1),
    launch.command,
    ...launch.args,
    ...Object.entries(launch.env).map(([key, value]) => `${key}=${value}`),
  ];
  return Buffer.from(`${fields.length}\0${fields.map((f) => `${f}\0`).join('')}`);
}

/** The control line that resizes the terminal (the kernel then sends SIGWINCH). */
export function resizeCommand(cols: number, rows: number): string {
  return `resize ${cols} ${rows}\n`;
}

/** A helper started ahead of need: python's start is most of a PTY's cost. */
interface Spare {
  python: string;
  child: ChildProcess;
  broken: boolean;
  at: number;
}

/** A spare older than this is not used: the helper gives up waiting after 30 s (IDLE_S). */
const SPARE_MS = 20_000;

let spare: Spare | undefined;
let spareHooked = false;

/**
 * Start the program on a new PTY through `shims/pty.py` (the zero-dependency
 * backend), in its own session and process group like any spawnProcess
 * child. fd 0 is what is typed, fd 1 the terminal's output, fd 2 the
 * helper's own errors, fd 3 its control channel (the launch, then resizes).
 * The helper started for the previous PTY spawn is used when there is one,
 * and a new one is started for the next (it exits after 30 s unused, or
 * when this process exits).
 */
export function spawnPythonPty(launch: PtyLaunch): ChildProcess {
  const python = launch.pty.python;
  const ready = spare;
  spare = undefined;
  const child = ready && usable(ready, python) ? ready.child : startHelper(python).child;
  // EPIPE once the helper has exited; its exit is reported by the TestProcess.
  child.stdin?.on('error', () => {});
  const control = child.stdio[3] as Writable;
  control.on('error', () => {});
  control.write(encodeLaunch(launch));
  // As soon as this call returns: the head start is what makes the next spawn fast.
  setImmediate(() => {
    spare ??= startHelper(python);
  });
  return child;
}

function usable(ready: Spare, python: string): boolean {
  const { child } = ready;
  return (
    ready.python === python &&
    !ready.broken &&
    performance.now() - ready.at < SPARE_MS &&
    child.pid !== undefined &&
    child.exitCode === null &&
    child.signalCode === null &&
    // Killed, but its exit not seen by Node yet (Linux; elsewhere no /proc to ask).
    !isDeadState(readStat(child.pid)?.state ?? 'R')
  );
}

function startHelper(python: string): Spare {
  const helper = packageFile(join('shims', 'pty.py'));
  // -I -S: no PYTHON* vars, no site packages; the program's env goes in the launch.
  const child = spawn(python, ['-I', '-S', helper], {
    cwd: '/',
    env: {},
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
  });
  const started: Spare = { python, child, broken: false, at: performance.now() };
  const broken = () => {
    started.broken = true;
    if (spare === started) spare = undefined;
  };
  child.once('error', broken);
  child.once('exit', broken);
  // A spare keeps nothing alive and is ended with this process.
  child.unref();
  for (const pipe of child.stdio) (pipe as unknown as { unref?: () => void })?.unref?.();
  if (!spareHooked) {
    spareHooked = true;
    onProcessExit(() => {
      try {
        if (spare?.child.pid) process.kill(spare.child.pid, 'SIGKILL');
      } catch {
        // gone already
      }
    });
  }
  return started;
}

import { type ChildProcess, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { onProcessExit } from '../../internal/exit-cleanup.js';
import { markInfrastructure } from '../../internal/infra-fds.js';
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
  keep: boolean;
  pty: ResolvedPty;
}

/**
 * The launch as `shims/pty.py` reads it on fd 3: a field count, then each
 * field ended by a NUL (none can hold one: `spawnProcess` refuses a NUL in
 * the arguments and env of a PTY process). The umask is this process's now:
 * the helper may have been started before it changed.
 */
export function encodeLaunch(launch: PtyLaunch, umask: number): Buffer {
  const fields = [
    String(launch.pty.cols),
    String(launch.pty.rows),
    String(launch.drainMs),
    launch.keep ? '1' : '0',
    String(umask),
    resolve(launch.cwd), // the helper runs in /
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
  /** Its stdio is shimkit's own until a launch takes it (the leak sanitizer's fd diff, LK-03). */
  unmark: () => void;
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
  const fits = ready !== undefined && usable(ready, python);
  if (ready && !fits) discard(ready);
  const helper = ready && fits ? ready : startHelper(python);
  helper.unmark(); // the program's now: its descriptors are the test's
  const child = helper.child;
  // EPIPE once the helper has exited; its exit is reported by the TestProcess.
  child.stdin?.on('error', () => {});
  const control = child.stdio?.[3] as (Writable & NodeJS.ReadableStream) | undefined;
  if (control) {
    control.on('error', () => {});
    control.write(encodeLaunch(launch, currentUmask()));
    reportExecFailure(child, control, launch);
  }
  // As soon as this call returns: the head start is what makes the next spawn fast.
  setImmediate(() => {
    spare ??= startHelper(python);
  });
  return child;
}

/**
 * Node's umask now. (Reading it is a documentation-only deprecation,
 * DEP0139: racy only against a change made in another thread.)
 */
function currentUmask(): number {
  return process.umask();
}

/**
 * When the helper could not exec the program it says so on fd 3
 * (`spawn-error ENOENT 2`): emitted as the child's `error`, as Node's own
 * spawn does, so the TestProcess rejects with a `SpawnError`.
 */
function reportExecFailure(
  child: ChildProcess,
  control: NodeJS.ReadableStream,
  launch: PtyLaunch,
): void {
  let text = '';
  // The helper's end closes it: half open, it would stay open for good (LK-03 found it).
  control.on('end', () => (control as unknown as { destroy(): void }).destroy());
  control.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1');
    const match = /^spawn-error (\w+) (\d+)\n/.exec(text);
    if (!match) return;
    const code = match[1] as string;
    const error = Object.assign(new Error(`spawn ${launch.file} ${code}`), {
      code,
      errno: -Number(match[2]),
      syscall: `spawn ${launch.file}`,
      path: launch.file,
      spawnargs: [...launch.args],
    });
    child.emit('error', error);
  });
}

/** End a spare that will not be used (too old, or for another python). */
function discard(ready: Spare): void {
  try {
    if (ready.child.pid && !ready.broken) process.kill(ready.child.pid, 'SIGKILL');
  } catch {
    // gone already
  }
  closeStdio(ready);
}

/**
 * A spare nobody will launch: its stdio goes now. Unref'd and never read,
 * its sockets would not see the helper's end, and stay open for good.
 */
function closeStdio(spare: Spare): void {
  for (const stream of spare.child.stdio ?? []) (stream as { destroy?: () => void })?.destroy?.();
  spare.unmark();
}

/** A zombie, a dead process, or one stopped (by a signal or a tracer) cannot take a launch. */
function unfit(state: string): boolean {
  return isDeadState(state) || state === 'T' || state === 't';
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
    // Killed (or stopped), its exit not seen by Node yet (Linux; elsewhere no /proc to ask).
    !unfit(readStat(child.pid)?.state ?? 'R')
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
  const started: Spare = {
    python,
    child,
    broken: false,
    at: performance.now(),
    unmark: markInfrastructure(child.stdio ?? []),
  };
  child.once('close', () => started.unmark());
  const broken = () => {
    started.broken = true;
    if (spare === started) {
      spare = undefined;
      closeStdio(started); // ended unused
    }
  };
  child.once('error', broken);
  child.once('exit', broken);
  // A spare keeps nothing alive and is ended with this process.
  child.unref();
  // (No stdio when the spawn failed at once, as with EMFILE: the `error` event says so.)
  for (const pipe of child.stdio ?? []) (pipe as unknown as { unref?: () => void })?.unref?.();
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

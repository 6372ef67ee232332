import { type RunOptions, resolveRunTimeout, resolveSpawn } from './options.js';
import { PtyUnavailableError } from './pty/errors.js';
import type { ScreenSnapshot } from './pty/screen.js';
import { TestProcess } from './test-process.js';
import type { ProcessExit, WaitResult } from './types.js';

/** What `run()` reports. */
export interface RunResult {
  /**
   * The exit code, or `null` when a signal ended the process. On Windows a
   * process ended by taskkill (after a deadline) reports `1`.
   */
  exitCode: number | null;
  /** The signal that ended it (`SIGTERM`/`SIGKILL` after a deadline), or `null` (always on Windows). */
  signal: NodeJS.Signals | null;
  /**
   * The last `tailBytes` of stdout. With `pty`: of everything the program
   * wrote to the terminal (its stdout and stderr, in order, as the terminal
   * passed them on: `\n` comes as `\r\n`).
   */
  stdout: string;
  /** The last `tailBytes` of stderr. With `pty`, empty (the terminal is stdout). */
  stderr: string;
  /**
   * With `pty`: the terminal's last screen (as `TestProcess.screen()`), or
   * `undefined` without `@xterm/headless`. Without `pty`, `undefined`.
   */
  screen?: ScreenSnapshot;
  /** Bytes of stdout / stderr that did not fit in the tail. */
  stdoutDroppedBytes: number;
  stderrDroppedBytes: number;
  /** Whether the deadline passed and the tree was closed. */
  timedOut: boolean;
  /** From spawn to exit (or to the end of the close after a deadline). */
  durationMs: number;
  /** The command line, for messages. */
  command: string;
}

/**
 * Run a command to the end with a deadline, and return its exit and output.
 * On POSIX whatever it leaves behind in its process group is closed too, so
 * nothing in the group outlives the call (a process that left the group,
 * such as a daemon, can). On Windows a deadline ends the tree with taskkill,
 * but what a child that already exited left behind (a `start /b`
 * grandchild) cannot be found and lives on. A non-zero exit is reported,
 * not thrown.
 *
 * @example
 * const r = await run('git', ['status', '--short'], { sandbox: sb, timeoutMs: 5000 });
 * expect(r).toMatchObject({ exitCode: 0, timedOut: false });
 */
export async function run(
  command: string,
  args: readonly string[] = [],
  options?: RunOptions,
): Promise<RunResult> {
  const resolved = resolveSpawn(command, args, options, 'run');
  const timeoutMs = resolveRunTimeout(options, command);
  const started = performance.now();
  const p = TestProcess.create(command, args, resolved);
  const release = p.hold(); // requirement SP-10: a run() in progress keeps Node alive
  let waited: WaitResult;
  let exit: ProcessExit;
  try {
    waited = await p.wait({ timeoutMs });
    // On a deadline: SIGTERM, SIGKILL after graceMs, then drain for up to drainMs.
    // After a normal exit: only leftovers in the group (background children) are ended.
    exit = await p.close();
  } finally {
    release();
  }
  const screen = resolved.pty ? lastScreen(p) : undefined;
  return {
    ...(screen ? { screen } : {}),
    exitCode: exit.exitCode,
    signal: exit.signal,
    stdout: p.stdout.tail(),
    stderr: p.stderr.tail(),
    stdoutDroppedBytes: p.stdout.droppedBytes,
    stderrDroppedBytes: p.stderr.droppedBytes,
    timedOut: waited.timedOut,
    durationMs: waited.timedOut ? Math.round(performance.now() - started) : exit.durationMs,
    command: p.commandLine,
  };
}

/** The screen of a PTY run, or `undefined` without `@xterm/headless`. */
function lastScreen(p: TestProcess): ScreenSnapshot | undefined {
  try {
    return p.screen();
  } catch (error) {
    if (error instanceof PtyUnavailableError) return undefined;
    throw error;
  }
}

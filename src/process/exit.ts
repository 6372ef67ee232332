import type { ChildProcess } from 'node:child_process';
import { ProcessExitedError, SpawnError } from './errors.js';
import type { ProcessExit, WaitResult } from './types.js';

/**
 * How one child ended, in two stages: the exit (or the spawn error emitted
 * instead when it never started), then its output pipes closing, which a
 * grandchild that holds them may delay — so the drain is bounded.
 */
export class ChildExit {
  readonly #started: number;
  #exit: ProcessExit | undefined;
  #error: SpawnError | undefined;
  #streamsClosed = false;
  readonly #settled: Promise<void>; // exit or spawn error
  readonly #drained: Promise<void>; // stdio closed (or spawn error)

  /**
   * `onExit` runs when the child exits, `onError` when it never started
   * (before either promise resolves); `commandLine` and `cwd` name it in the
   * `SpawnError`.
   */
  constructor(
    child: ChildProcess,
    started: number,
    where: { commandLine: string; cwd: string },
    hooks: { onExit(): void; onError(): void },
  ) {
    this.#started = started;
    this.#settled = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.#exit = {
          exitCode: code,
          signal,
          durationMs: Math.round(performance.now() - started),
        };
        hooks.onExit();
        resolve();
      });
      child.on('error', (error: NodeJS.ErrnoException) => {
        // Emitted instead of 'exit' when the process never started; or, for a
        // PTY, by its helper after the exit it caused (on fd 3, read before
        // the pipes close): the program could not be executed.
        if (this.#error) return;
        const lateSpawn = String(error.syscall ?? '').startsWith('spawn') && !this.#streamsClosed;
        if (this.#exit && !lateSpawn) return;
        this.#error = new SpawnError(where.commandLine, where.cwd, error);
        hooks.onError();
        resolve();
      });
    });
    this.#drained = new Promise((resolve) => {
      child.once('close', () => {
        this.#streamsClosed = true;
        resolve();
      });
      child.once('error', () => resolve());
    });
  }

  /** How it ended, once it has. */
  get exit(): ProcessExit | undefined {
    return this.#exit;
  }

  /** Why it never started, if so. */
  get error(): SpawnError | undefined {
    return this.#error;
  }

  get running(): boolean {
    return this.#exit === undefined && this.#error === undefined;
  }

  /** Resolves on exit or spawn failure. */
  settled(): Promise<void> {
    return this.#settled;
  }

  /** Exit (or spawn failure), then up to `drainMs` for the pipes to deliver what is still in them. */
  async afterOutput(drainMs: number): Promise<void> {
    await this.#settled;
    await this.drain(drainMs);
  }

  /** After exit, give the output streams up to `drainMs` to close. */
  async drain(drainMs: number): Promise<void> {
    if (this.#streamsClosed || this.#error) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.#drained,
      new Promise<void>((resolve) => {
        // Unref'd: while someone awaits the drain, the open pipes it waits for are ref'd
        // (requirement SP-10); when nobody does, it must not keep Node alive for drainMs.
        timer = setTimeout(resolve, drainMs);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
  }

  /**
   * `afterOutput()`, or `{ timedOut: true }` once `timeoutMs` passes first.
   * Throws the `SpawnError` if the process never started.
   */
  async wait(drainMs: number, timeoutMs: number | undefined): Promise<WaitResult> {
    if (timeoutMs === undefined) {
      await this.afterOutput(drainMs);
    } else {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), timeoutMs);
      });
      const outcome = await Promise.race([this.afterOutput(drainMs), deadline]);
      clearTimeout(timer);
      if (outcome === 'late') return { timedOut: true };
    }
    if (this.#error) throw this.#error;
    return { ...(this.#exit as ProcessExit), timedOut: false };
  }

  /**
   * Once it ended: an error saying that `label` (pid `pid`) ended `what`,
   * followed by `tail` (its last output); the `SpawnError` if it never started.
   */
  endedError(label: string, pid: number, what: string, tail: string): Error {
    if (this.#error) return this.#error;
    const exit = this.#exit as ProcessExit;
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.exitCode}`;
    return new ProcessExitedError(
      `${label} (pid ${pid}) ${how} ${what}. ${tail}`,
      exit.exitCode,
      exit.signal,
    );
  }

  /** The exit, or an empty one measured now when the process never started. */
  result(): ProcessExit {
    return (
      this.#exit ?? { exitCode: null, signal: null, durationMs: performance.now() - this.#started }
    );
  }
}

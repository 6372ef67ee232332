import type { ChildProcess } from 'node:child_process';
import { SpawnError } from './errors.js';

/**
 * The stdin of a TestProcess: `write()`/`end()` for the test, which throw
 * unless it is a pipe, and quiet variants for the interaction helpers.
 */
export class ProcessStdin {
  readonly #child: ChildProcess;
  readonly #commandLine: string;
  readonly #cwd: string;
  readonly #mode: unknown;

  constructor(child: ChildProcess, commandLine: string, cwd: string, mode: unknown) {
    this.#child = child;
    this.#commandLine = commandLine;
    this.#cwd = cwd;
    this.#mode = mode;
  }

  /** The stdin pipe; throws a `SpawnError` naming `what` when there is none. */
  pipe(what: string) {
    const stdin = this.#child.stdin;
    if (!stdin) {
      throw new SpawnError(
        this.#commandLine,
        this.#cwd,
        new Error(
          `${what} needs stdin: 'pipe' (this process was spawned with stdin: '${String(this.#mode)}')`,
        ),
      );
    }
    return stdin;
  }

  /** Write unless stdin is closed (or not a pipe). */
  writeQuietly(data: string | Uint8Array): void {
    const stdin = this.#child.stdin;
    if (stdin && !stdin.writableEnded) stdin.write(data);
  }

  endQuietly(): void {
    this.#child.stdin?.end();
  }
}

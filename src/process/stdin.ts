import type { ChildProcess } from 'node:child_process';
import { StdinNotWritableError } from './errors.js';

/**
 * The stdin of a TestProcess: `write()`/`end()` for the test, which say why
 * when input cannot reach the process, and quiet variants for the
 * interaction helpers. Who closed stdin is remembered for the message.
 */
export class ProcessStdin {
  readonly #child: ChildProcess;
  readonly #label: string;
  readonly #mode: 'pipe' | 'ignore' | 'inherit';
  /** Why the process can no longer read input (it exited), or undefined while it runs. */
  readonly #gone: (what: string) => Error | undefined;
  #closedBy: string | undefined;
  /** Written before closing: a terminal's end-of-file character (Ctrl+D), for a PTY. */
  readonly #eof: string | undefined;

  constructor(
    child: ChildProcess,
    label: string,
    mode: 'pipe' | 'ignore' | 'inherit',
    hasInput: boolean,
    eof: string | undefined,
    gone: (what: string) => Error | undefined,
  ) {
    this.#eof = eof;
    this.#child = child;
    this.#label = label;
    this.#mode = mode;
    this.#gone = gone;
    if (hasInput) this.#closedBy = 'input';
  }

  /**
   * Throw unless `what` (e.g. `write()`) can send input now: a
   * `StdinNotWritableError` when stdin is not a pipe or is closed, the
   * process's `ProcessExitedError` (or `SpawnError`) once it ended.
   */
  assertWritable(what: string): void {
    this.#assertPipe(what);
    const gone = this.#gone(what);
    if (gone) throw gone;
    if (this.#closedBy !== undefined || this.#child.stdin?.writableEnded) {
      const by = this.#closedBy ?? 'end()';
      const how =
        by === 'input'
          ? "after the input given as the `stdin` option. To write more, spawn it with `stdin: 'pipe'` (the default) and write the input with write()."
          : `by ${by}. Write everything before closing stdin${by === 'send()' ? ' (or pass `end: false` to send())' : ''}.`;
      throw new StdinNotWritableError(
        `${this.#label}.${what} cannot send input: stdin was already closed ${how}`,
        'closed',
      );
    }
  }

  write(data: string | Uint8Array): void {
    this.assertWritable('write()');
    this.#child.stdin?.write(data);
  }

  /** Close stdin; does nothing if it is already closed (the process still runs). */
  end(): void {
    this.#assertPipe('end()');
    const gone = this.#gone('end()');
    if (gone) throw gone;
    this.endQuietly('end()');
  }

  /** Write unless stdin is closed (or not a pipe). */
  writeQuietly(data: string | Uint8Array): void {
    const stdin = this.#child.stdin;
    if (stdin && !stdin.writableEnded) stdin.write(data);
  }

  /** Close stdin if open; `by` (`'end()'`, `'send()'`) says who, for later messages. */
  endQuietly(by: string): void {
    const stdin = this.#child.stdin;
    if (!stdin || stdin.writableEnded) return;
    this.#closedBy ??= by;
    if (this.#eof !== undefined) stdin.write(this.#eof);
    stdin.end();
  }

  #assertPipe(what: string): void {
    if (this.#child.stdin) return;
    throw new StdinNotWritableError(
      `${this.#label}.${what} cannot send input: the process was spawned with \`stdin: '${this.#mode}'\`, so its stdin is not a pipe. ` +
        "Spawn it with `stdin: 'pipe'` (the default) to use write(), end(), respond() and send().",
      'not-a-pipe',
    );
  }
}

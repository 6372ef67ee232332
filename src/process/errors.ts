import { ShimkitError } from '../internal/errors.js';

/** The command to spawn was not found on the PATH it would be looked up in. */
export class CommandNotFoundError extends ShimkitError {
  /** The command as given. */
  readonly command: string;
  /** The PATH dirs searched, in order. */
  readonly searched: readonly string[];

  constructor(command: string, searched: readonly string[], cwd: string) {
    super(
      'ERR_SHIMKIT_COMMAND_NOT_FOUND',
      `Command not found: ${JSON.stringify(command)} is not an executable file in any PATH dir ` +
        `(searched ${searched.length === 0 ? 'nothing: PATH is empty' : searched.join(', ')}; cwd ${cwd}). ` +
        'Check the name, pass an absolute path, or put its dir first on PATH (sandbox.use(dir) or the `env` option).',
    );
    this.command = command;
    this.searched = searched;
  }
}

/** The operating system refused to start the process (permissions, a bad cwd, …). */
export class SpawnError extends ShimkitError {
  constructor(command: string, cwd: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super('ERR_SHIMKIT_SPAWN', `Could not start ${command} in ${cwd}: ${reason}`, { cause });
  }
}

/** The process exited while something was still waiting for its output. */
export class ProcessExitedError extends ShimkitError {
  /** Exit code, or null when a signal ended it. */
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;

  constructor(message: string, exitCode: number | null, signal: NodeJS.Signals | null) {
    super('ERR_SHIMKIT_PROCESS_EXITED', message);
    this.exitCode = exitCode;
    this.signal = signal;
  }
}

/** Why a TestProcess's stdin cannot take input: it is not a pipe, or it was already closed. */
export type StdinState = 'not-a-pipe' | 'closed';

/**
 * `write()`, `respond()` or `send()` was called while the process's stdin
 * cannot take input: it was spawned with `stdin: 'ignore'` or `'inherit'`, or
 * its stdin was already closed (by `end()`, by `send()`, or after the input
 * given as the `stdin` option). A usage error: the process itself started fine.
 */
export class StdinNotWritableError extends ShimkitError {
  /** `'not-a-pipe'` (the `stdin` option) or `'closed'` (already ended). */
  readonly state: StdinState;

  constructor(message: string, state: StdinState) {
    super('ERR_SHIMKIT_STDIN_NOT_WRITABLE', message);
    this.state = state;
  }
}

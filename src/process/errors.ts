import { ShimkitError } from '../internal/errors.js';

/**
 * The command to spawn was not found on the PATH it would be looked up in, or
 * only as files without the exec bit (`notExecutable`).
 */
export class CommandNotFoundError extends ShimkitError {
  /** The command as given. */
  readonly command: string;
  /** The PATH dirs searched, in order, each once. */
  readonly searched: readonly string[];
  /** Files of that name that exist there but are not executable (POSIX), in search order. */
  readonly notExecutable: readonly string[];

  constructor(
    command: string,
    searched: readonly string[],
    cwd: string,
    notExecutable: readonly string[] = [],
  ) {
    super(
      'ERR_SHIMKIT_COMMAND_NOT_FOUND',
      `Command not found: ${JSON.stringify(command)} is not an executable file in any PATH dir ` +
        `(searched ${searched.length === 0 ? 'nothing: PATH is empty' : searched.join(', ')}; cwd ${cwd}). ` +
        (notExecutable.length > 0
          ? notExecutableHint(notExecutable)
          : 'Check the name, pass an absolute path, or put its dir first on PATH (sandbox.use(dir) or the `env` option).'),
    );
    this.command = command;
    this.searched = searched;
    this.notExecutable = notExecutable;
  }
}

/** `` /bin/x exists but is not executable: run `chmod +x /bin/x` to make it so. `` */
function notExecutableHint(files: readonly string[]): string {
  const chmod = `\`chmod +x ${shellQuoted(files[0] as string)}\``;
  if (files.length === 1) {
    return `${files[0]} exists but is not executable: run ${chmod} to make it so, or pass the path of an executable file.`;
  }
  return `${files.join(', ')} exist but are not executable: make the one you mean executable, e.g. ${chmod}.`;
}

/** `path` as a POSIX shell word: bare when safe, else in single quotes. */
function shellQuoted(path: string): string {
  return /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replaceAll("'", "'\\''")}'`;
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

/**
 * `close()` could not end the process (Windows: taskkill failed and so did
 * terminating the process itself). Nothing more can be done from Node.
 */
export class ProcessNotEndedError extends ShimkitError {
  readonly pid: number;

  constructor(commandLine: string, pid: number, why: string) {
    super(
      'ERR_SHIMKIT_PROCESS_NOT_ENDED',
      `Could not end ${commandLine} (pid ${pid}): ${why}, and it still ran 5 s after being terminated directly. End it by hand (taskkill /PID ${pid} /T /F) and check that %SystemRoot%\\System32\\taskkill.exe runs.`,
    );
    this.pid = pid;
  }
}

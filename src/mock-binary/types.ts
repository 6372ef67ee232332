import type { CallStatus, MockResponse, PassthroughStats, ResponseSource } from '../queue/types.js';
import type { CassetteOptions } from './cassette.js';

export type { MockResponse };

/** Options of `createMockBinary()` and `bin.mock()`. */
export interface MockBinaryOptions {
  /**
   * Longest a single call may run (delay included) before it ends with a
   * timeout diagnostic and exit code `MockExitCode.timeout` (124).
   * @default 30000
   */
  timeoutMs?: number;
  /**
   * What a call gets once every queued response is used: `'repeat'` the last
   * response again, `'fail'` a diagnostic on stderr and exit code
   * `MockExitCode.unmatched` (123), or a response object as fallback.
   * @default 'repeat'
   */
  onExhausted?: 'repeat' | 'fail' | MockResponse;
  /**
   * Strict mode (requirement MB-22): a call no response is left for fails
   * (as with `onExhausted: 'fail'`: nothing repeats, nothing is a default),
   * and `dispose()` throws `UnusedResponsesError` if a response that is not
   * `optional` was not used up, or a call had no response. Not with
   * `onExhausted` or `default`.
   * @default false
   */
  strict?: boolean;
  /**
   * A spy (requirement MB-15): every call no queued response is left for
   * runs the real command (found on PATH after the mock), with the same
   * argv, stdin, stdout, stderr and exit code, and is recorded. Queued
   * responses still answer the calls they fit. Not with `onExhausted`,
   * `default` or `strict`.
   * @default false
   */
  spy?: boolean;
  /**
   * Record and replay (requirement MB-24): a cassette file, as a path or
   * `{ path, mode: 'record' | 'replay' | 'auto' }` (default `'auto'`: replay
   * when the file exists). Recording makes the mock a spy and writes the
   * file on `dispose()`; replaying answers each recorded argv once, in
   * order, and fails any other call. `SHIMKIT_CASSETTE_MODE` overrides the
   * mode.
   * @example
   * createMockBinary('gh', { cassette: join(__dirname, 'gh.cassette.json') });
   */
  cassette?: string | CassetteOptions;
  /**
   * The response of calls made while nothing was ever queued (with
   * `onExhausted: 'repeat'`).
   * @default {} (exit 0, no output)
   */
  default?: MockResponse;
  /**
   * Env vars to record with each call: a list of names, or `true` for all
   * (values of names that look like credentials are replaced by `[redacted]`).
   * @default false
   * @example createMockBinary('git', { recordEnv: ['GIT_DIR', 'HOME'] })
   */
  recordEnv?: boolean | string[];
  /**
   * `'capture'` reads the call's stdin (up to `stdinLimitBytes`) and records
   * it: to EOF, or until no input came for `stdinIdleMs`, so a caller that
   * keeps stdin open and writes nothing (as `execFile` does) is still
   * answered. `'ignore'` leaves stdin unread.
   * @default 'ignore'
   */
  stdin?: 'capture' | 'ignore';
  /**
   * With `stdin: 'capture'`: end the capture once no input has come for this
   * long, and answer (the call records `stdinOpen: true`). A caller that
   * writes and closes stdin is captured whole; one that pauses longer than
   * this between writes is cut there. `0` waits for EOF (until `timeoutMs`).
   * @default 200
   */
  stdinIdleMs?: number;
  /**
   * Most stdin bytes recorded per call with `stdin: 'capture'`; the rest is read and dropped.
   * @default 1048576
   */
  stdinLimitBytes?: number;
  /** Responses to enqueue right away. */
  responses?: MockResponse[];
  /**
   * Which shim to write: a POSIX `sh` script, or a `.cmd` file for `'win32'`.
   * @default process.platform
   */
  platform?: NodeJS.Platform;
  /**
   * The Node that runs the shim runner.
   * @default process.execPath
   */
  nodePath?: string;
  /**
   * POSIX: the shim serves static responses itself — output, exit code,
   * delay, files — in 2–5 ms instead of Node's 25 or more (requirement
   * PERF-07). Calls print, write and exit the same either way, and are
   * recorded the same but for `claimMs` (none) and times (from the record
   * file); a response the shell cannot act out exactly (a signal, a hang,
   * chunks, stdin capture, routing, a live handler, more than 16 KiB of
   * output …) runs the runner. During a delay the shell reacts to signals as
   * a real command does, Node as Node does (it ignores SIGPIPE, starts its
   * inspector on SIGUSR1). `false`: every call runs the runner. Windows
   * always does. See docs/decisions/006-sh-fast-path.md.
   * @default true, unless the env sets SHIMKIT_FAST_PATH=0
   */
  fastPath?: boolean;
  /**
   * Parent dir for the mock's temp dir (createMockBinary / createMockBinDir
   * only). Left out, on Linux with `TMPDIR` unset, a tmpfs with at least 1 GiB
   * free where shims can run (`$XDG_RUNTIME_DIR` when it is this user's, else
   * `/dev/shm`), where a shell-served call's two file creations are cheap;
   * `SHIMKIT_TMPFS=0` turns that off.
   * @default a tmpfs as above, else os.tmpdir()
   */
  tmpDir?: string;
}

/**
 * How a recorded call ended: as the call recorded it, or `'killed'` if it died
 * mid-way. A call that could not write how it ended (a full disk) exits with
 * `MockExitCode.broken` and shows as `'failed'`.
 */
export type MockCallStatus = CallStatus | 'killed';

/** One recorded call of a mock. */
export interface MockCall {
  /**
   * 1-based call number, in the order calls reached the queue (published their
   * record). Under parallel calls a higher number may hold a lower response.
   */
  index: number;
  /** The arguments, exactly as the call received them (without the command name). */
  argv: string[];
  /**
   * The arguments as bytes. Equal to `argv` in UTF-8, except where an argument
   * was not valid UTF-8: then `argv` shows U+FFFD and this holds the real bytes
   * (read from /proc/self/cmdline on Linux).
   */
  argvBytes: Buffer[];
  cwd: string;
  pid: number;
  ppid: number;
  /**
   * Epoch milliseconds. For a call the sh shim served (see `fastPath`), the
   * birth time of its record file (its modification time where the file
   * system keeps no birth time), to the file system clock's tick: it may
   * read a few ms earlier than the moment the caller spawned the call.
   */
  startedAt: number;
  /** Epoch milliseconds; undefined while running or if the call was killed. */
  endedAt: number | undefined;
  /**
   * How long the call took to claim its response, in milliseconds: from its
   * first look at the queue to holding a response. There is no lock to wait
   * for, so this stays small however many calls run at once. Undefined for
   * a call the sh shim served (a shell has no clock): `endedAt - startedAt`
   * bounds it.
   */
  claimMs: number | undefined;
  status: MockCallStatus;
  /**
   * The signal the call ended by (then `exitCode` is undefined): a response's
   * `signal`, a passthrough's real command's, or `'SIGPIPE'` when its output
   * met a pipe with no reader (`mock | head -c1`), as a real command ends there.
   */
  signal: NodeJS.Signals | undefined;
  /** 1-based number of the queued response used (also for a repeat), if any. */
  response: number | undefined;
  /** Where the response came from: the queue, a repeat of the last, the fallback, the default, or none. */
  responseSource: ResponseSource | undefined;
  /** The exit code the call ended with, if it ended on its own. */
  exitCode: number | undefined;
  /** The one-line diagnostic the shim printed (timed out, unmatched, failed). */
  diagnostic: string | undefined;
  /** Recorded env vars (see `recordEnv`). */
  env: Record<string, string> | undefined;
  /** Captured stdin as UTF-8 text (see `stdin: 'capture'`). */
  stdin: string | undefined;
  /** Captured stdin bytes. */
  stdinBytes: Buffer | undefined;
  /** True if stdin was longer than `stdinLimitBytes`. */
  stdinTruncated: boolean;
  /** True if the capture ended by `stdinIdleMs` while the caller still had stdin open. */
  stdinOpen: boolean;
  /**
   * For a `passthrough: { framing, faults }` response: frames and bytes the
   * proxy forwarded to the real command (`c2s`) and from it (`s2c`), and the
   * faults it applied by kind.
   */
  proxy: PassthroughStats | undefined;
}

export interface WaitForCallsOptions {
  /**
   * Give up after this long with a `WaitTimeoutError` that lists the calls so
   * far. The default is below the 5 s test timeout of vitest and jest, so a
   * miss shows this diagnostic rather than the runner's bare timeout.
   * @default 4000
   */
  timeoutMs?: number;
  /**
   * Count calls that have `'started'`, or only those that have `'finished'`
   * (exited, timed out, failed or were killed).
   * @default 'finished'
   */
  until?: 'started' | 'finished';
}

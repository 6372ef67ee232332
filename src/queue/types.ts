/**
 * What is stored on disk. These are wire formats: plain JSON, validated by
 * the writer, so the runner can trust their shape and stay small.
 */

/**
 * One scripted response: what a single call of the mock does.
 *
 * @example
 * git.enqueue({ stdout: 'main\n' });
 * git.enqueue({ stderr: 'fatal: not a git repository\n', exitCode: 128 });
 * git.enqueue({ delayMs: 200, writeFiles: { '.git/HEAD': 'ref: refs/heads/main\n' } });
 */
export interface MockResponse {
  /** Text written to stdout (UTF-8). Flushed whole before the call exits. */
  stdout?: string;
  /** Text written to stderr (UTF-8). */
  stderr?: string;
  /** Bytes written to stdout, base64-encoded (for binary output). Not with `stdout`. */
  stdoutBase64?: string;
  /** Bytes written to stderr, base64-encoded. Not with `stderr`. */
  stderrBase64?: string;
  /**
   * Exit code, 0–255; none is reserved for shimkit.
   * @default 0
   */
  exitCode?: number;
  /**
   * Wait this long before writing files and output. A delay beyond the mock's
   * `timeoutMs` ends the call with a timeout diagnostic instead.
   * @default 0
   */
  delayMs?: number;
  /** Values written to stdout as one JSON line each, after `stdout`. */
  jsonl?: unknown[];
  /**
   * Files to write before output: path → UTF-8 content. Relative paths resolve
   * against the call's cwd; parent dirs are created.
   */
  writeFiles?: Record<string, string>;
}

/** One line of `queue.jsonl`: a validated `MockResponse` as JSON. */
export type WireResponse = MockResponse;

/** The mock's options as stored in `state.json`. */
export interface WireConfig {
  version: 1;
  name: string;
  timeoutMs: number;
  onExhausted: 'repeat' | 'fail' | { response: WireResponse };
  default?: WireResponse;
  recordEnv: boolean | string[];
  stdin: 'capture' | 'ignore';
  stdinLimitBytes: number;
}

/** `state.json`: the live generation and the mock's options, read by every call. */
export interface WireState {
  generation: string;
  config: WireConfig;
}

/** Where the response a call used came from. */
export type ResponseSource = 'queue' | 'repeat' | 'fallback' | 'default' | 'none';

/** How a call ended, as far as the call itself could record it. */
export type CallStatus = 'running' | 'exited' | 'timed-out' | 'unmatched' | 'failed';

/** `calls/<n>.json`: one call, rewritten atomically as it progresses. */
export interface WireCallRecord {
  seq: number;
  argv: string[];
  /** The arguments' raw bytes, only when UTF-8 decoding of argv was lossy. */
  argvBase64?: string[];
  cwd: string;
  pid: number;
  ppid: number;
  startedAt: number;
  endedAt?: number;
  /** How long the call waited for the queue lock. */
  lockWaitMs?: number;
  status: CallStatus;
  source?: ResponseSource;
  /** 1-based queue position of the response used (queue and repeat sources). */
  response?: number;
  exitCode?: number;
  /** The one-line diagnostic the shim printed, for timed-out, unmatched and failed calls. */
  diagnostic?: string;
  env?: Record<string, string>;
  stdinBase64?: string;
  stdinTruncated?: boolean;
}

/**
 * What is stored on disk. These are wire formats: plain JSON, validated by
 * the writer, so the runner can trust their shape and stay small.
 */

/** One line of `queue.jsonl`: a scripted response, already validated. */
export interface WireResponse {
  stdout?: string;
  stderr?: string;
  stdoutBase64?: string;
  stderrBase64?: string;
  exitCode?: number;
  delayMs?: number;
  jsonl?: unknown[];
  writeFiles?: Record<string, string>;
}

/** `config.json`: the mock's options. */
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

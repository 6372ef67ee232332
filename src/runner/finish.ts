import { writeBytes } from '../queue/atomic.js';
import type { Claim } from '../queue/claim.js';
import { MockExitCode } from '../queue/exit-codes.js';
import { recordLine } from '../queue/records.js';
import { type CallStatus, MOCK_SIGNALS } from '../queue/types.js';

const ENDS_NODE: ReadonlySet<string> = new Set(MOCK_SIGNALS);

import { cold } from './lazy.js';
import { writeAll } from './output.js';

/**
 * End the call: append its last record line (status, exit code, stdin), print
 * the diagnostic if there is one, and exit. If the record cannot be written
 * (a full disk), the call does not pretend: it exits with the `broken` code
 * and says so, and marks its record file read-only so readers report it as
 * failed rather than killed (a chmod needs no space).
 */
export function finishCall(
  claim: Claim,
  status: Exclude<CallStatus, 'running'>,
  exitCode: number,
  diagnostic?: string,
  signal?: NodeJS.Signals,
): never {
  const { record } = claim;
  // A signal Node survives (SIGXFSZ is ignored, SIGUSR1 starts the
  // inspector) cannot end the call: it exits as a shell reports it. SIGPIPE,
  // ignored too, is put back to its default below (a write into a closed pipe).
  if (signal && !ENDS_NODE.has(signal) && signal !== 'SIGPIPE') {
    // Loaded here only: a module loaded at start costs every call its time.
    const { constants } = require('node:os') as typeof import('node:os');
    exitCode = 128 + (constants.signals[signal] ?? 0);
    signal = undefined;
  }
  let code = exitCode;
  let message = diagnostic;
  const end: Record<string, unknown> = signal
    ? { status, signal, endedAt: Date.now() }
    : { status, exitCode, endedAt: Date.now() };
  if (diagnostic) end.diagnostic = diagnostic;
  if (record.stdinBase64 !== undefined) end.stdinBase64 = record.stdinBase64;
  if (record.stdinTruncated) end.stdinTruncated = true;
  if (record.stdinOpen) end.stdinOpen = true;
  if (record.stdoutBase64 !== undefined) end.stdoutBase64 = record.stdoutBase64;
  if (record.stderrBase64 !== undefined) end.stderrBase64 = record.stderrBase64;
  if (record.proxy !== undefined) end.proxy = record.proxy;
  try {
    writeBytes(claim.fd, Buffer.from(recordLine(end)));
  } catch (error) {
    code = MockExitCode.broken;
    message = cold().recordFailed(claim, error);
    signal = undefined;
  }
  if (message) writeAll(2, Buffer.from(`shimkit: ${message}\n`));
  if (signal) {
    // Node ignores SIGPIPE; a listener added and removed puts SIG_DFL back (libuv).
    if (signal === 'SIGPIPE') process.on(signal, ignore).off(signal, ignore);
    process.kill(process.pid, signal); // a scripted end by signal
    return process.exit(1); // Windows: no signals, the process is terminated with code 1
  }
  return process.exit(code);
}

const ignore = () => {};

/**
 * Output met a pipe whose reader has gone (EPIPE): the call ends by SIGPIPE,
 * as a real command does there, and its record says so. Windows has no
 * signals: there the call ends with its scripted code, the output dropped.
 */
export function piped(claim: Claim, exitCode: number): never {
  if (process.platform === 'win32') return finishCall(claim, 'exited', exitCode);
  return finishCall(claim, 'exited', 0, undefined, 'SIGPIPE');
}

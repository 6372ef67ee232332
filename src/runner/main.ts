import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { MAX_TIMER_MS } from '../internal/limits.js';
import { type Claim, claimCall, stopAt } from '../queue/claim.js';
import { errnoCode, ProtocolError, stateError } from '../queue/errors.js';
import { MockExitCode } from '../queue/exit-codes.js';
import { formatCommand } from '../queue/format.js';
import type { WireResponse } from '../queue/types.js';
import { describeCall, processStartTime } from './call.js';
import { restoreMovedEnv } from './env.js';
import { finishCall } from './finish.js';
import { writeAll } from './output.js';
import { fileWrites, responseFor, stderrBytes, stdoutBytes } from './response.js';
import { readStdin } from './stdin.js';

/**
 * The shim runner: `node runner.cjs <state dir> <args…>`. It claims the next
 * scripted response (see src/queue/claim.ts), records the call, and then acts
 * the response out: delay, files, output, exit code. Diagnostics are one line
 * on stderr starting with "shimkit:".
 */

async function main(argv: string[]): Promise<void> {
  const startedAt = processStartTime();
  const [stateDir, ...args] = argv;
  restoreMovedEnv(process.env);
  if (!stateDir) return die('usage: runner.cjs <state dir> [args…] (this file is run by a shim)');

  let claim: Claim;
  try {
    claim = claimCall(stateDir, (config) => describeCall(args, startedAt, config));
  } catch (error) {
    return die(describeFailure(error, stateDir));
  }

  const { config, record } = claim;
  const label = `mock "${config.name}" call #${record.seq}`;
  const finish = (
    status: 'exited' | 'timed-out' | 'unmatched' | 'failed',
    code: number,
    diagnostic?: string,
  ) => finishCall(claim, status, code, diagnostic);

  let response: WireResponse | undefined;
  try {
    response = responseFor(claim);
  } catch (error) {
    return finish('failed', MockExitCode.broken, describeFailure(error, claim.genDir));
  }
  if (!response) {
    const used =
      claim.total === 0
        ? 'no responses were queued'
        : claim.total === 1
          ? 'the only queued response is used'
          : `all ${claim.total} queued responses are used`;
    return finish(
      'unmatched',
      MockExitCode.unmatched,
      `${label} (${formatCommand(config.name, args)}) has no response: ${used} and onExhausted is "fail". Enqueue another response or set onExhausted.`,
    );
  }

  // The deadline counts from the call's own start, however long the machine
  // took to start it, and nothing below outlives it.
  const deadline = startedAt + config.timeoutMs;
  let waitingFor = '';
  const timedOut = () => {
    const why =
      waitingFor === 'delay'
        ? ` (scripted delayMs: ${response.delayMs})`
        : waitingFor === 'stdin'
          ? ' while waiting for stdin to close'
          : ' before it could answer (a busy machine started it late)';
    finish(
      'timed-out',
      MockExitCode.timeout,
      `${label} timed out after ${config.timeoutMs} ms${why}; raise the mock's timeoutMs or shorten the delay.`,
    );
  };
  if (Date.now() >= deadline) return timedOut();
  // Only a call that waits arms a timer (the first timer of a process costs
  // about half a millisecond, on every mocked call otherwise).
  const delayMs = response.delayMs ?? 0;
  if (config.stdin === 'capture' || delayMs > 0) {
    const timer = setTimeout(timedOut, Math.min(deadline - Date.now(), MAX_TIMER_MS));
    if (config.stdin === 'capture') {
      waitingFor = 'stdin';
      const captured = await readStdin(config.stdinLimitBytes);
      record.stdinBase64 = captured.data.toString('base64');
      if (captured.truncated) record.stdinTruncated = true;
    }
    if (delayMs > 0) {
      waitingFor = 'delay';
      // A delay that reaches past the deadline is left to the timeout timer: a
      // timer cannot hold more than MAX_TIMER_MS, and it would end there anyway.
      if (Date.now() + delayMs >= deadline) return new Promise<void>(() => {});
      await new Promise((done) => setTimeout(done, delayMs));
    }
    clearTimeout(timer);
    if (Date.now() >= deadline) return timedOut();
  }

  let out: Buffer;
  let err: Buffer;
  try {
    // Relative paths are left to the OS, against the call's real cwd (one
    // that was deleted fails, as it would for the real command).
    for (const [file, content] of Object.entries(fileWrites(claim.genDir, response))) {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, content);
    }
    out = stdoutBytes(claim.genDir, response);
    err = stderrBytes(claim.genDir, response);
  } catch (error) {
    const what =
      error instanceof ProtocolError ? error.message : `could not write a file: ${oneLine(error)}`;
    return finish('failed', MockExitCode.broken, `${label} ${what}`);
  }
  writeAll(1, out);
  writeAll(2, err);
  stopAt(config, 'served');
  finish('exited', response.exitCode ?? 0);
}

/** One line: what went wrong and the file it concerns. */
function describeFailure(error: unknown, near: string): string {
  const file =
    typeof (error as { path?: unknown })?.path === 'string'
      ? (error as { path: string }).path
      : near;
  if (errnoCode(error) !== undefined || error instanceof ProtocolError) {
    return stateError(error, file, 'call').message;
  }
  return `unexpected error in the shim runner (please report it): ${oneLine(error)}`;
}

function oneLine(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.replace(/\s*\n\s*/g, ' ');
}

function die(message: string, code: number = MockExitCode.broken): void {
  writeAll(2, Buffer.from(`shimkit: ${message}\n`));
  process.exit(code);
}

void main(process.argv.slice(2));

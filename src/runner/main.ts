import { writeBytes } from '../queue/atomic.js';
import {
  type Claim,
  claimCall,
  isRecordedFailure,
  type RoutedClaimer,
  stopAt,
} from '../queue/claim.js';
import { MockExitCode } from '../queue/exit-codes.js';
import type { LiveAnswer } from '../queue/live.js';
import { recordLine } from '../queue/records.js';
import type { WireResponse } from '../queue/types.js';
import { describeCall, processStartTime } from './call.js';
import type { Waiting } from './diagnostics.js';
import { restoreCallerEnv, restoreMovedEnv, takePassedThrough } from './env.js';
import { finishCall, piped } from './finish.js';
import { cold, routing } from './lazy.js';
import { askLive } from './live.js';
import { isOutputStalled, writeAll } from './output.js';
import { render, responseFor } from './response.js';
import type { ResumeStep } from './resume.js';

/**
 * The shim runner: `node runner.cjs <state dir> <args…>`. It claims the next
 * scripted response (see src/queue/claim.ts), records the call, and then acts
 * the response out: delay, files, output, exit code. Diagnostics are one line
 * on stderr starting with "shimkit:".
 *
 * This file is parsed by every mocked call, so the common path is short and
 * synchronous, and everything else (messages, stdin, waiting) is called only
 * when needed, most of it from the cold half (./cold.ts).
 */
function main(argv: string[]): void {
  let startedAt = processStartTime();
  let [stateDir, ...args] = argv;
  // A call the sh shim started hands over with how far it got (shims/posix-fast.sh).
  let resumed: string | undefined;
  if (stateDir?.startsWith('-R')) {
    resumed = stateDir.slice(2);
    [stateDir, ...args] = args;
  }
  if (!restoreCallerEnv(process.env, stateDir ?? '')) restoreMovedEnv(process.env);
  takePassedThrough(process.env);
  if (!stateDir) die('usage: runner.cjs <state dir> [args…] (this file is run by a shim)');
  const claimRouted: RoutedClaimer = ({ genDir, seq, queueText, fields, config, link }) =>
    routing().claimRouted(
      genDir,
      seq,
      queueText,
      { argv: fields.argv, cwd: fields.cwd, env: process.env },
      config,
      link,
    );
  let claim: Claim;
  let step: ResumeStep | undefined;
  try {
    if (resumed) ({ claim, step } = cold().resumeClaim(stateDir, resumed, claimRouted));
    else
      claim = claimCall(stateDir, (config) => describeCall(args, startedAt, config), claimRouted);
  } catch (error) {
    const recorded = isRecordedFailure(error) ? error : undefined;
    const message = cold().describeFailure(recorded?.cause ?? error, stateDir);
    if (recorded) cold().endRecord(recorded.fd, message);
    die(message);
  }
  if (resumed) startedAt = claim.record.startedAt; // the call started with the shell
  let response: WireResponse | undefined;
  try {
    response = responseFor(claim);
  } catch (error) {
    fail(claim, cold().describeFailure(error, claim.genDir));
  }
  if (step !== undefined && step !== 'r' && step !== 'c') {
    // The shell served part of a static response: the rest, with no delay or live question again.
    if (step.startsWith('x')) finishCall(claim, 'exited', Number(step.slice(1)));
    serve(claim, cold().restOfResponse(response ?? {}, step as 's0' | 's1' | 's2'));
  }
  // The deadline counts from the call's own start, however long the machine
  // took to start it, and nothing below outlives it.
  const deadline = startedAt + claim.config.timeoutMs;
  let answer: ReturnType<typeof askLive>;
  try {
    answer = askLive(claim, deadline);
  } catch (error) {
    fail(claim, cold().describeFailure(error, claim.genDir)); // the generation went away meanwhile
  }
  if (answer === 'timeout') timedOut(claim, 'held', 0);
  if (answer !== undefined) response = answered(claim, response, answer);
  if (!response) {
    finishCall(claim, 'unmatched', MockExitCode.unmatched, cold().unmatchedMessage(claim));
  }
  const delayMs = response.delayMs ?? 0;
  // Late already. A scripted delay as long as the timeout would have ended it
  // anyway, so that is the reason given; otherwise the late start is.
  if (Date.now() >= deadline) {
    timedOut(claim, delayMs >= claim.config.timeoutMs ? 'delay' : 'start', delayMs);
  }
  const acts =
    response.chunks !== undefined ||
    response.signal !== undefined ||
    response.hang === true ||
    response.exitAfterStdinEof === true ||
    (response.passthrough !== undefined && response.passthrough !== false);
  if ((response.stdin ?? claim.config.stdin) === 'capture' || delayMs > 0 || acts) {
    cold()
      .wait(claim, response, deadline, { serve, output, timedOut })
      .catch((error: unknown) => {
        if (isOutputStalled(error)) timedOut(claim, 'output', 0);
        fail(claim, cold().serveFailure(claim, error, 'its output'));
      });
  } else {
    serve(claim, response);
  }
}

/** What the test process's live answer makes of the call's response. */
function answered(
  claim: Claim,
  claimed: WireResponse | undefined,
  answer: LiveAnswer,
): WireResponse | undefined {
  if ('use' in answer) return claimed;
  if ('none' in answer) return undefined;
  if ('error' in answer) fail(claim, `${cold().label(claim)}: ${answer.error}`);
  claim.record.source = 'handler';
  claim.record.response = undefined;
  try {
    writeBytes(claim.fd, Buffer.from(recordLine({ source: 'handler' })));
  } catch (error) {
    fail(claim, cold().describeFailure(error, claim.genDir));
  }
  return answer.response as WireResponse;
}

/** Files, then stdout and stderr, then the exit code. */
function serve(claim: Claim, response: WireResponse): void {
  output(claim, response);
  finishCall(claim, 'exited', response.exitCode ?? 0);
}

/** Files, then stdout and stderr (a failure ends the call with its diagnostic). */
function output(claim: Claim, response: WireResponse): void {
  const deadline = claim.record.startedAt + claim.config.timeoutMs;
  let output: { out: Buffer; err: Buffer };
  try {
    output = render(claim.genDir, response);
  } catch (error) {
    fail(claim, cold().serveFailure(claim, error, 'a file'));
  }
  try {
    if (!writeAll(1, output.out, deadline) || !writeAll(2, output.err, deadline)) {
      piped(claim, response.exitCode ?? 0);
    }
  } catch (error) {
    if (isOutputStalled(error)) timedOut(claim, 'output', 0);
    fail(claim, cold().serveFailure(claim, error, 'its output'));
  }
  stopAt(claim.config, 'served');
}

function timedOut(claim: Claim, waiting: Waiting, delayMs: number): never {
  const message = cold().timeoutMessage(claim, waiting, delayMs);
  return finishCall(claim, 'timed-out', MockExitCode.timeout, message);
}

function fail(claim: Claim, message: string): never {
  return finishCall(claim, 'failed', MockExitCode.broken, message);
}

function die(message: string): never {
  writeAll(2, Buffer.from(`shimkit: ${message}\n`));
  return process.exit(MockExitCode.broken);
}

main(process.argv.slice(2));

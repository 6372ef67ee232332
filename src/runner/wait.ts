import { MAX_TIMER_MS } from '../internal/limits.js';
import type { Claim } from '../queue/claim.js';
import type { WireResponse } from '../queue/types.js';
import type { AfterWait } from './cold-half.js';
import type { Waiting } from './diagnostics.js';
import { finishCall, piped } from './finish.js';
import { faultedPassthrough } from './lazy.js';
import { writeAll } from './output.js';
import { type RealEnd, runReal } from './passthrough.js';
import { readStdin } from './stdin.js';

/**
 * Capture stdin and sit out the delay, under a timer for the deadline; then
 * act the response out: output, streamed chunks, and the end it scripts
 * (requirement MB-14: a signal, a hang, the caller's stdin closing). Only a
 * call that waits arms a timer: the first timer of a process costs about
 * half a millisecond.
 */
export async function wait(
  claim: Claim,
  response: WireResponse,
  deadline: number,
  { serve, output, timedOut }: AfterWait,
): Promise<void> {
  const delayMs = response.delayMs ?? 0;
  let waiting: Waiting = 'start';
  const timer = setTimeout(
    () => timedOut(claim, waiting, delayMs),
    Math.min(deadline - Date.now(), MAX_TIMER_MS),
  );
  const capture = (response.stdin ?? claim.config.stdin) === 'capture';
  const { stdinLimitBytes, stdinIdleMs } = claim.config;
  // A call that passes through feeds the real command all of stdin, to EOF
  // (the record keeps `stdinLimitBytes` of it); one that exits once stdin
  // ends captures it after its output.
  let fullStdin: Buffer | undefined;
  const faulted = typeof response.passthrough === 'object'; // stdin streams through the proxy
  if (capture && response.passthrough === true) {
    waiting = 'stdin';
    fullStdin = (await readStdin(Number.MAX_SAFE_INTEGER, 0)).data;
    const kept = fullStdin.subarray(0, stdinLimitBytes);
    keep(claim, { data: kept, truncated: kept.length < fullStdin.length, open: false });
  } else if (capture && !faulted && !response.exitAfterStdinEof) {
    waiting = 'stdin';
    keep(claim, await readStdin(stdinLimitBytes, stdinIdleMs ?? 0));
  }
  if (delayMs > 0) {
    waiting = 'delay';
    // A delay that reaches past the deadline is left to the timeout timer: a
    // timer cannot hold more than MAX_TIMER_MS, and it would end there anyway.
    if (Date.now() + delayMs >= deadline) return;
    await new Promise((done) => setTimeout(done, delayMs));
  }
  if (Date.now() >= deadline) {
    clearTimeout(timer);
    timedOut(claim, waiting, delayMs);
    return;
  }
  if (response.passthrough) {
    waiting = 'passthrough';
    let end: RealEnd;
    // The real command's own deadline ends its tree first, then the call.
    clearTimeout(timer);
    if (typeof response.passthrough === 'object') {
      end = await faultedPassthrough().runFaulted(
        claim,
        deadline,
        response.passthrough,
        capture ? stdinLimitBytes : undefined,
      );
    } else {
      end = await runReal(claim, deadline, fullStdin);
    }
    // Recorded output was passed on as it came (passthrough.ts): the record keeps it.
    if ((end.kind === 'exit' || end.kind === 'signal') && end.out && end.err) {
      claim.record.stdoutBase64 = end.out.toString('base64');
      claim.record.stderrBase64 = end.err.toString('base64');
    }
    if (end.kind === 'timeout') timedOut(claim, 'passthrough', 0);
    else if (end.kind === 'missing') finishCall(claim, 'failed', 127, end.message);
    else if (end.kind === 'signal') finishCall(claim, 'exited', 0, undefined, end.signal);
    else finishCall(claim, 'exited', end.code);
    return;
  }
  const { chunks, signal, hang, exitAfterStdinEof } = response;
  if (chunks === undefined && signal === undefined && !hang && !exitAfterStdinEof) {
    clearTimeout(timer);
    serve(claim, response);
    return;
  }
  output(claim, response);
  for (const chunk of chunks ?? []) {
    waiting = 'chunks';
    if (chunk.delayMs) {
      if (Date.now() + chunk.delayMs >= deadline) return; // left to the timeout timer, as above
      await new Promise((done) => setTimeout(done, chunk.delayMs));
    }
    if (
      !writeAll(1, Buffer.from(chunk.stdout ?? ''), deadline) ||
      !writeAll(2, Buffer.from(chunk.stderr ?? ''), deadline)
    ) {
      piped(claim, response.exitCode ?? 0);
    }
  }
  if (hang) {
    waiting = 'hang'; // until killed, or the timer ends it at the deadline
    return;
  }
  if (exitAfterStdinEof) {
    waiting = 'stdin-eof';
    if (capture) keep(claim, await readStdin(stdinLimitBytes, 0));
    else await stdinEof();
  }
  clearTimeout(timer);
  finishCall(claim, 'exited', response.exitCode ?? 0, undefined, signal);
}

/** Put captured stdin in the call's record. */
function keep(claim: Claim, captured: { data: Buffer; truncated: boolean; open: boolean }): void {
  claim.record.stdinBase64 = captured.data.toString('base64');
  if (captured.truncated) claim.record.stdinTruncated = true;
  if (captured.open) claim.record.stdinOpen = true;
}

/** Resolves when stdin ends (EOF, or an error such as a closed pipe), its data dropped. */
function stdinEof(): Promise<void> {
  return new Promise((done) => {
    const stdin = process.stdin;
    if (stdin.readableEnded) return done();
    stdin.on('data', () => {});
    stdin.once('end', () => done());
    stdin.once('error', () => done());
    stdin.resume();
  });
}

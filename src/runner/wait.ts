import { MAX_TIMER_MS } from '../internal/limits.js';
import type { Claim } from '../queue/claim.js';
import type { WireResponse } from '../queue/types.js';
import type { Waiting } from './diagnostics.js';
import { readStdin } from './stdin.js';

/** What the hot half does once the wait is over. */
export interface AfterWait {
  serve(claim: Claim, response: WireResponse): void;
  timedOut(claim: Claim, waiting: Waiting, delayMs: number): void;
}

/**
 * Capture stdin and sit out the delay, under a timer for the deadline. Only a
 * call that waits arms a timer: the first timer of a process costs about
 * half a millisecond.
 */
export async function wait(
  claim: Claim,
  response: WireResponse,
  deadline: number,
  { serve, timedOut }: AfterWait,
): Promise<void> {
  const delayMs = response.delayMs ?? 0;
  let waiting: Waiting = 'start';
  const timer = setTimeout(
    () => timedOut(claim, waiting, delayMs),
    Math.min(deadline - Date.now(), MAX_TIMER_MS),
  );
  if (claim.config.stdin === 'capture') {
    waiting = 'stdin';
    const { stdinLimitBytes, stdinIdleMs } = claim.config;
    const captured = await readStdin(stdinLimitBytes, stdinIdleMs ?? 0);
    claim.record.stdinBase64 = captured.data.toString('base64');
    if (captured.truncated) claim.record.stdinTruncated = true;
    if (captured.open) claim.record.stdinOpen = true;
  }
  if (delayMs > 0) {
    waiting = 'delay';
    // A delay that reaches past the deadline is left to the timeout timer: a
    // timer cannot hold more than MAX_TIMER_MS, and it would end there anyway.
    if (Date.now() + delayMs >= deadline) return;
    await new Promise((done) => setTimeout(done, delayMs));
  }
  clearTimeout(timer);
  if (Date.now() >= deadline) {
    timedOut(claim, waiting, delayMs);
    return;
  }
  serve(claim, response);
}

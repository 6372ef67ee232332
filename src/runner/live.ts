import { existsSync, readFileSync } from 'node:fs';
import { writeFileAtomic } from '../queue/atomic.js';
import type { Claim } from '../queue/claim.js';
import { ProtocolError, VANISHED } from '../queue/errors.js';
import {
  type LiveAnswer,
  type LiveCall,
  type LiveState,
  liveAnswerPath,
  liveCallPath,
  livePath,
  pidNamespace,
} from '../queue/live.js';
import { isAlive } from '../queue/process-alive.js';

/**
 * The call's side of the live channel (see src/queue/live.ts): if the test
 * process listens and has a say in this call, ask it and wait for the answer
 * (sleeping in small steps with Atomics.wait, no timers, no modules), until
 * the call's deadline. Returns the answer, or undefined when nobody listens
 * or it has no say; `'timeout'` when no answer came in time. Throws a
 * `ProtocolError` as soon as nobody can answer any more: the question is
 * gone (the mock was reset or disposed, or the test process's exit cleanup
 * removed it) or the test process itself is (killed with SIGKILL, say).
 */
export function askLive(claim: Claim, deadline: number): LiveAnswer | 'timeout' | undefined {
  const marker = livePath(claim.genDir);
  if (!existsSync(marker)) return undefined;
  let state: LiveState;
  try {
    state = JSON.parse(readFileSync(marker, 'utf8')) as LiveState;
  } catch {
    return undefined; // being rewritten, or gone with a reset: as if nobody listened
  }
  // Only a queued response wins over the handler (not a repeat, a fallback or the default).
  if (!state.holds && !(state.handler && claim.record.source !== 'queue')) return undefined;
  const { record } = claim;
  const question: LiveCall = {
    seq: record.seq,
    argv: record.argv,
    cwd: record.cwd,
    env: process.env as Record<string, string>,
    source: record.source ?? 'none',
    response: record.response,
  };
  const file = liveCallPath(claim.genDir, record.seq);
  writeFileAtomic(file, JSON.stringify(question)); // 0600: it holds the call's whole env
  const answerFile = liveAnswerPath(claim.genDir, record.seq);
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  let pause = 0.25;
  for (let round = 0; ; round += 1) {
    try {
      return JSON.parse(readFileSync(answerFile, 'utf8')) as LiveAnswer;
    } catch {
      // not there yet
    }
    if (!existsSync(file)) throw new ProtocolError(VANISHED, file);
    // Every ~50 ms once waiting is long: the answer usually comes in a few.
    if (
      state.pid !== undefined &&
      round % 10 === 9 &&
      // A pid means nothing in another pid namespace (unshare, a container).
      state.pidns === pidNamespace() &&
      !isAlive(state.pid)
    ) {
      throw new ProtocolError(
        `the test process that was to answer it (pid ${state.pid}) is gone, so no hold() or handle() can`,
        file,
      );
    }
    const left = deadline - Date.now();
    if (left <= 0) return 'timeout';
    Atomics.wait(sleeper, 0, 0, Math.min(pause, left));
    pause = Math.min(pause * 2, 5);
  }
}

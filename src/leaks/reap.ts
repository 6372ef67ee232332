import { isDeadState, readStat } from '../internal/proc.js';
import { realDelay, realNow } from '../internal/real-timers.js';
import type { LeakedProcess } from './scan.js';

/** What `killAndReap` did. */
export interface ReapResult {
  /** Pids sent SIGKILL that are gone now (or zombies, their end only not yet collected). */
  killed: number[];
  /** Pids still running after `waitMs`, or that could not be signalled (EPERM). */
  remaining: number[];
}

/** Poll step while waiting for killed processes to go. */
const POLL_MS = 5;

/**
 * SIGKILL each process, then wait (polling /proc, at most `waitMs`) until
 * each is gone. A pid is only signalled while it still names the process
 * that was found (same start time), so a pid reused meanwhile is left alone.
 */
export async function killAndReap(
  processes: readonly LeakedProcess[],
  options: { waitMs?: number } = {},
): Promise<ReapResult> {
  const waitMs = options.waitMs ?? 500;
  const pending = new Set<LeakedProcess>();
  const remaining: number[] = [];
  for (const p of processes) {
    if (gone(p)) continue;
    try {
      process.kill(p.pid, 'SIGKILL');
      pending.add(p);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') remaining.push(p.pid);
    }
  }
  const deadline = realNow() + waitMs;
  while (pending.size > 0) {
    for (const p of pending) if (gone(p)) pending.delete(p);
    if (pending.size === 0 || realNow() >= deadline) break;
    await realDelay(POLL_MS);
  }
  remaining.push(...[...pending].map((p) => p.pid));
  const left = new Set(remaining);
  return {
    killed: processes.map((p) => p.pid).filter((pid) => !left.has(pid)),
    remaining: remaining.sort((a, b) => a - b),
  };
}

/** Whether the process found as `p` has ended (or its pid now names another). */
function gone(p: LeakedProcess): boolean {
  const stat = readStat(p.pid);
  return (
    stat === null || (stat !== undefined && (isDeadState(stat.state) || stat.start !== p.start))
  );
}

import { randomBytes } from 'node:crypto';
import { readStat } from '../internal/proc.js';
import { killAndReap } from './reap.js';
import {
  findCookieProcesses,
  findOrphanedCookieProcesses,
  type LeakedProcess,
  type OrphanedProcess,
  type PidMark,
  type ProcReader,
} from './scan.js';

/**
 * Find, kill and reap every process carrying a cookie (LK-01): what
 * `LeakScope.check()` and `shimkit leaks` do once the test (the command) is
 * over. A process can fork between a scan and the kill, so the scan is
 * repeated (a few rounds) until it finds nothing new.
 */

/** What one sweep found and did. */
export interface CookieSweep {
  /** False where processes cannot be scanned (no /proc: macOS, Windows); then nothing is found. */
  scanned: boolean;
  /** The processes that carried the cookie, as found (before they were killed), by pid. */
  processes: LeakedProcess[];
  /** Pids killed and gone. */
  killed: number[];
  /** Pids still there after the kill and `waitMs` (or that could not be signalled). */
  remaining: number[];
}

/** Scans after a kill, for processes forked between a scan and the kill. */
const MAX_ROUNDS = 3;

export async function sweepCookie(
  cookie: string,
  options: { since?: PidMark | undefined; waitMs: number; reader?: ProcReader },
): Promise<CookieSweep> {
  const found = new Map<number, LeakedProcess>();
  const killed = new Set<number>();
  let remaining: number[] = [];
  let scanned = true;
  for (let round = 0; round < MAX_ROUNDS; round += 1) {
    const now = findCookieProcesses(cookie, { since: options.since, reader: options.reader });
    if (now === undefined) {
      scanned = false;
      break;
    }
    const fresh = now.filter((p) => found.get(p.pid)?.start !== p.start);
    if (fresh.length === 0) break;
    for (const p of fresh) found.set(p.pid, p);
    const reaped = await killAndReap(fresh, { waitMs: options.waitMs });
    for (const pid of reaped.killed) killed.add(pid);
    remaining = reaped.remaining;
  }
  return {
    scanned,
    processes: [...found.values()].sort((a, b) => a.pid - b.pid),
    killed: [...killed].sort((a, b) => a - b),
    remaining,
  };
}

/**
 * Kill and reap every process carrying the cookie of a test process (or
 * `shimkit leaks`) that is gone: no scope is left to find what a SIGKILLed
 * test worker left behind, so the next process's first scope does. Returns
 * what it found and killed; nothing where there is no /proc.
 */
export async function sweepOrphanedCookies(options: {
  waitMs: number;
  reader?: ProcReader;
}): Promise<{ processes: OrphanedProcess[]; killed: number[]; remaining: number[] }> {
  const found = findOrphanedCookieProcesses({ reader: options.reader }) ?? [];
  if (found.length === 0) return { processes: [], killed: [], remaining: [] };
  const reaped = await killAndReap(found, { waitMs: options.waitMs });
  return { processes: found, killed: reaped.killed, remaining: reaped.remaining };
}

let made = 0;
let cookiePrefix: string | undefined;

/**
 * A cookie unique to one scope: `<pid>-<start time>-<instance>-<n>`, after
 * `prefix` when given (`shimkit leaks` uses `cli-`, so a report says who set
 * it). `<instance>` is random per copy of this module: worker threads (vitest's
 * `threads` pool) and VM contexts (`vmThreads`, `vmForks`) each load their own
 * copy in one process, whose counters all start at 1.
 */
export function newCookie(prefix = ''): string {
  cookiePrefix ??= `${process.pid}-${readStat(process.pid)?.start ?? Date.now()}-${randomBytes(4).toString('hex')}`;
  made += 1;
  return `${prefix}${cookiePrefix}-${made}`;
}

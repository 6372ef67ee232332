import { isDeadState, readStat } from '../proc.js';
import { type Host, hasProcStat, realHost, selfThread } from './host.js';

/**
 * Who made a leftover: a process, named by its pid and start time so that a
 * reused pid is not mistaken for it, and for a worker thread on Linux also
 * the thread's id and start time.
 */
export interface Owner {
  pid: number;
  /** Start time in clock ticks since boot (Linux); 0 where it is unknown. */
  start: number;
  /** The host's {@link Host.scope} when it was recorded. */
  scope: string;
  /** The worker thread, when the owner is one (Linux only). */
  thread?: { tid: number; start: number };
}

let self: Owner | undefined;
let selfWithThread: Owner | undefined | null;

/** This process as an owner (the same in every thread). */
export function processOwner(): Owner {
  if (!self) {
    const host = realHost();
    const stat = hasProcStat(host.platform) ? readStat('self') : undefined;
    self = { pid: process.pid, start: stat?.start ?? 0, scope: host.scope };
  }
  return self;
}

/** This worker thread as an owner (Linux); undefined in the main thread or elsewhere. */
export function threadOwner(): Owner | undefined {
  if (selfWithThread === undefined) {
    const thread = selfThread();
    selfWithThread = thread ? { ...processOwner(), thread } : null;
  }
  return selfWithThread ?? undefined;
}

/**
 * Whether `owner` is certainly gone: its pid is dead or a zombie, or alive
 * with another start time (the pid was reused), or — for a thread — the
 * process lives but that thread does not. In doubt (another scope, no start
 * time to compare, /proc unreadable, an odd error) the answer is false: the
 * sweep must never take what a live owner still uses.
 */
export function ownerGone(owner: Owner, host: Host = realHost()): boolean {
  if (owner.scope !== host.scope) return false;
  if (!Number.isSafeInteger(owner.pid) || owner.pid <= 0) return false; // kill(0 or -n) means groups
  try {
    host.kill(owner.pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH'; // EPERM: alive, another user's
  }
  if (!hasProcStat(host.platform)) return false; // alive, and nothing more to check
  const stat = readStat(owner.pid, host.readProc);
  if (!stat) return stat === null; // vanished since kill(0): gone; unreadable: in doubt
  if (isDeadState(stat.state)) return true;
  if (owner.start === 0) return false;
  if (stat.start !== owner.start) return true;
  if (owner.thread) {
    const thread = readStat(`${owner.pid}/task/${owner.thread.tid}`, host.readProc);
    if (thread === undefined) return false;
    if (thread === null || thread.start !== owner.thread.start) return true;
  }
  return false;
}

/** Whether two owners are the same process (threads aside). */
export function sameProcess(a: Owner, b: Owner): boolean {
  return a.pid === b.pid && a.start === b.start && a.scope === b.scope;
}

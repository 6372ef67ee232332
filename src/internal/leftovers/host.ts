import { readlinkSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import { fnv1a } from '../fnv.js';
import { listProc, readProcFile, readStat } from '../proc.js';

/**
 * What the leftover sweep asks of the machine, as an object so that each
 * platform's branch is unit-tested anywhere with a fake one.
 */
export interface Host {
  platform: NodeJS.Platform;
  /** `process.kill()`: throws with `code` ESRCH (no such process) or EPERM (not ours). */
  kill(pid: number, signal: NodeJS.Signals | 0): void;
  /** A /proc file's text; null when it does not exist, undefined when it cannot be read. */
  readProc(path: string): string | null | undefined;
  /** The names in /proc, or undefined without /proc. */
  listProc(): string[] | undefined;
  /** The uid files must have to be ours to remove; undefined where there are no uids (Windows). */
  uid: number | undefined;
  /**
   * Which machine and pid namespace pids are numbered in (Linux: a hash of
   * the boot id and `/proc/self/ns/pid`; `'0'` where unknown). Owners
   * recorded in another scope are never judged: their pids mean nothing here.
   */
  scope: string;
}

/** Whether `platform` has a /proc with process start times. */
export function hasProcStat(platform: NodeJS.Platform): boolean {
  return platform === 'linux' || platform === 'android';
}

let real: Host | undefined;

/** The machine this process runs on. */
export function realHost(): Host {
  real ??= {
    platform: process.platform,
    kill: (pid, signal) => {
      process.kill(pid, signal);
    },
    readProc: readProcFile,
    listProc,
    uid: typeof process.getuid === 'function' ? process.getuid() : undefined,
    scope: hasProcStat(process.platform) ? linuxScope() : '0',
  };
  return real;
}

/** The boot id and pid namespace, hashed to 6 base-36 characters (FNV-1a). */
export function linuxScope(
  read: (path: string) => string | null | undefined = readProcFile,
): string {
  const boot = read('/proc/sys/kernel/random/boot_id')?.trim() ?? '';
  let ns = '';
  try {
    ns = readlinkSync('/proc/self/ns/pid');
  } catch {}
  if (boot === '' && ns === '') return '0';
  return scopeHash(`${boot} ${ns}`);
}

/** FNV-1a over `text`, as 6 base-36 characters. */
export function scopeHash(text: string): string {
  return (fnv1a(text) % 36 ** 6).toString(36).padStart(6, '0');
}

/** This thread's OS thread id and start time, in a worker thread on Linux; undefined elsewhere. */
export function selfThread(): { tid: number; start: number } | undefined {
  if (isMainThread || !hasProcStat(process.platform)) return undefined;
  try {
    // "<pid>/task/<tid>"
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    const stat = readStat(`${process.pid}/task/${tid}`);
    return Number.isInteger(tid) && stat ? { tid, start: stat.start } : undefined;
  } catch {
    return undefined;
  }
}

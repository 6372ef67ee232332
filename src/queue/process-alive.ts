import { readFileSync, readlinkSync } from 'node:fs';
import { parseStat } from '../internal/proc.js';
import { errnoCode } from './errors.js';

/**
 * Whether the process that made a call record still runs: `pid` is alive,
 * not a zombie (exited, not reaped yet), and — for a record older than a
 * couple of seconds, on Linux — still the same process, not a later one that
 * got the pid (`startedAt` is when the call's process started, epoch ms).
 */
export function isAlive(pid: number, startedAt?: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
  } catch (error) {
    return errnoCode(error) === 'EPERM';
  }
  if (process.platform !== 'linux' || !hasProc()) return true;
  if (isZombie(pid)) return false;
  if (startedAt === undefined || Date.now() - startedAt < REUSE_CHECK_AFTER_MS) return true;
  // The call's own process was forked before its runner measured `startedAt`
  // (however late a busy machine let it run); one that got the pid later
  // started after the call's process ended, so after `startedAt`.
  const started = startTime(pid);
  return started === undefined || started <= startedAt + START_TOLERANCE_MS;
}

/** A pid is reused only after its process ended, which takes longer than this from its start. */
const REUSE_CHECK_AFTER_MS = 2000;
/** Boot time has one-second precision; start ticks are 10 ms. */
const START_TOLERANCE_MS = 1500;

/**
 * A zombie has no executable any more: `readlink(/proc/<pid>/exe)` fails with
 * ENOENT (one syscall, a third of reading `/proc/<pid>/stat`, which matters
 * when `calls()` checks 256 running calls). EACCES means another user's live
 * process.
 */
function isZombie(pid: number): boolean {
  try {
    readlinkSync(`/proc/${pid}/exe`);
    return false;
  } catch (error) {
    return errnoCode(error) === 'ENOENT';
  }
}

let procMounted: boolean | undefined;

/** Whether /proc is there (a chroot or a sandbox may have none): without it, no zombie or reuse check. */
function hasProc(): boolean {
  if (procMounted === undefined) {
    try {
      readlinkSync('/proc/self/exe');
      procMounted = true;
    } catch {
      procMounted = false;
    }
  }
  return procMounted;
}

let bootTimeMs: number | undefined;

/** When `pid` started, epoch ms, from /proc (clock ticks are 1/100 s on Linux); undefined if unknown. */
function startTime(pid: number): number | undefined {
  try {
    bootTimeMs ??= Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'latin1'))?.[1]) * 1000;
    const stat = parseStat(readFileSync(`/proc/${pid}/stat`, 'latin1'));
    if (!stat || !Number.isFinite(bootTimeMs)) return undefined;
    return bootTimeMs + stat.start * 10;
  } catch {
    return undefined;
  }
}

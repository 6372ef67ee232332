import { readlinkSync } from 'node:fs';
import { errnoCode } from './errors.js';

/** Whether `pid` is a running process (a zombie — exited but not reaped — is not). */
export function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
  } catch (error) {
    return errnoCode(error) === 'EPERM';
  }
  return !isZombie(pid);
}

/**
 * A killed shim whose parent has not reaped it yet still answers kill(pid, 0).
 * A zombie has no executable any more: `readlink(/proc/<pid>/exe)` fails with
 * ENOENT (one syscall, a third of reading `/proc/<pid>/stat`, which matters
 * when `calls()` checks 256 running calls). EACCES means another user's live
 * process.
 */
function isZombie(pid: number): boolean {
  if (process.platform !== 'linux') return false;
  try {
    readlinkSync(`/proc/${pid}/exe`);
    return false;
  } catch (error) {
    return errnoCode(error) === 'ENOENT';
  }
}

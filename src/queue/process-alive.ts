import { readFileSync } from 'node:fs';
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

/** A killed shim whose parent has not reaped it yet still answers kill(pid, 0). */
function isZombie(pid: number): boolean {
  if (process.platform !== 'linux') return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.charAt(stat.lastIndexOf(')') + 2) === 'Z';
  } catch {
    return false;
  }
}

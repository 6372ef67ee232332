import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import type { Env } from '../internal/path-env.js';
import { groupMembers, isDeadState, readStat } from '../internal/proc.js';
import { findKey } from './env.js';

/**
 * Ending a process tree. POSIX: the child leads its own process group
 * (spawned `detached`), so one signal to `-pid` reaches its grandchildren too.
 * Windows: `taskkill /T /F`, found through `SystemRoot` rather than PATH, so a
 * sandbox PATH (or a mock named `taskkill`) cannot redirect it.
 */

/** The taskkill command line that ends `pid` and its descendants on Windows. */
export function taskkillCommand(pid: number, env: Env): { file: string; args: string[] } {
  const key = findKey(env, 'SystemRoot', 'win32');
  const root = (key ? env[key] : undefined) || 'C:\\Windows';
  return {
    file: path.win32.join(root, 'System32', 'taskkill.exe'),
    args: ['/PID', String(pid), '/T', '/F'],
  };
}

/** Send `signal` to the process group led by `pid`; false when the group is gone. */
export function signalGroup(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch (error) {
    // EPERM: a member exists but is not ours to signal (it changed user); count it as alive.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether any live process is left in the group led by `pid` (POSIX). A
 * zombie does not count: where PID 1 does not reap orphans (many containers),
 * a killed grandchild stays a zombie in the group for good.
 */
export function groupAlive(pid: number): boolean {
  if (!signalGroup(pid, 0)) return false;
  const members = groupMembers(pid);
  return members === undefined || members.some((m) => !isDeadState(m.state));
}

/** State letter and process group of one process from /proc/<pid>/stat. */
export function procStat(pid: number | string): { state: string; pgid: number } | undefined {
  return readStat(pid) ?? undefined;
}

/** Kill the tree at once, synchronously (for exit handlers). */
export function killTreeSync(pid: number, platform: NodeJS.Platform, env: Env): void {
  if (platform === 'win32') {
    const { file, args } = taskkillCommand(pid, env);
    spawnSync(file, args, { stdio: 'ignore', windowsHide: true, timeout: 5000 });
    return;
  }
  signalGroup(pid, 'SIGKILL');
}

/** Run taskkill for `pid` and resolve when it has finished (Windows). */
export function taskkill(pid: number, env: Env): Promise<void> {
  const { file, args } = taskkillCommand(pid, env);
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: 'ignore', windowsHide: true });
    child.on('error', () => resolve());
    child.on('close', () => resolve());
  });
}

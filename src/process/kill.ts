import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import type { Env } from '../internal/path-env.js';
import { groupMembers, isDeadState, readStat, sessionMembers } from '../internal/proc.js';
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

/**
 * SIGKILL every live process left in session `sid` (Linux: /proc; elsewhere
 * nothing is read, so nothing is done): for a PTY process, a job an
 * interactive shell put in a group of its own that ignored the SIGHUP.
 * Members are stopped first, pass after pass until a pass finds none new
 * (so none can fork away), then killed. Refuses a `sid` below 2 and this
 * process's own session. `leaderStart` is the start time of the process that
 * made the session: if a process with pid `sid` runs with another start time,
 * the number was reused and nothing is killed; members that started before
 * the leader are never ours and are left alone. Returns how many were killed.
 */
export function killSession(sid: number, leaderStart: number): number {
  if (!Number.isInteger(sid) || sid < 2 || readStat('self')?.sid === sid) return 0;
  const leader = readStat(sid);
  if (leader && leader.start !== leaderStart) return 0;
  const stopped = new Set<number>();
  for (let pass = 0; pass < 1000; pass++) {
    const fresh = (sessionMembers(sid) ?? []).filter(
      (m) =>
        !isDeadState(m.state) &&
        !stopped.has(m.pid) &&
        m.pid !== process.pid &&
        m.start >= leaderStart,
    );
    if (fresh.length === 0) break;
    for (const member of fresh) {
      signalQuietly(member.pid, 'SIGSTOP');
      stopped.add(member.pid);
    }
  }
  for (const pid of stopped) signalQuietly(pid, 'SIGKILL');
  return stopped.size;
}

/** Whether a live process is left in session `sid` (Linux; false without /proc). */
export function sessionAlive(sid: number): boolean {
  return (sessionMembers(sid) ?? []).some((m) => !isDeadState(m.state));
}

function signalQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // gone already, or not ours
  }
}

/** State letter and process group of one process from /proc/<pid>/stat. */
export function procStat(pid: number | string): { state: string; pgid: number } | undefined {
  return readStat(pid) ?? undefined;
}

/** How long taskkill may take before it counts as failed. */
export const TASKKILL_LIMIT_MS = 5000;
/** taskkill's exit code when no process has that pid (it exited first). */
const TASKKILL_NOT_FOUND = 128;

/**
 * Kill the tree at once, synchronously (for exit handlers). On Windows, if
 * taskkill cannot run or fails, the process itself is still terminated.
 */
export function killTreeSync(pid: number, platform: NodeJS.Platform, env: Env): void {
  if (platform === 'win32') {
    const { file, args } = taskkillCommand(pid, env);
    const r = spawnSync(file, args, {
      stdio: 'ignore',
      windowsHide: true,
      timeout: TASKKILL_LIMIT_MS,
    });
    if (r.error || (r.status !== 0 && r.status !== TASKKILL_NOT_FOUND)) killQuietly(pid);
    return;
  }
  signalGroup(pid, 'SIGKILL');
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL'); // TerminateProcess on Windows
  } catch {
    // already gone
  }
}

/**
 * Run taskkill for `pid` (Windows). Resolves with `undefined` once it ended
 * the tree (or found the process already gone), or with what went wrong: it
 * could not be started, it failed, or it took longer than
 * `TASKKILL_LIMIT_MS` (and was killed).
 */
export function taskkill(pid: number, env: Env): Promise<string | undefined> {
  const { file, args } = taskkillCommand(pid, env);
  return new Promise((resolve) => {
    let stderr = '';
    const child = spawn(file, args, {
      stdio: ['ignore', 'ignore', 'pipe'],
      windowsHide: true,
      timeout: TASKKILL_LIMIT_MS,
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      if (stderr.length < 500) stderr += chunk.toString();
    });
    child.on('error', (error: NodeJS.ErrnoException) =>
      resolve(`${file} could not be started (${error.code ?? error.message})`),
    );
    child.on('close', (code, signal) => {
      if (code === 0 || code === TASKKILL_NOT_FOUND) resolve(undefined);
      else if (signal) resolve(`${file} did not finish within ${TASKKILL_LIMIT_MS} ms`);
      else resolve(`${file} exited with ${code}${stderr.trim() ? `: ${stderr.trim()}` : ''}`);
    });
  });
}

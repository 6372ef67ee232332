import { lstatSync, unlinkSync } from 'node:fs';
import { groupMembers, isDeadState, readStat } from '../proc.js';
import { type Host, hasProcStat } from './host.js';

/**
 * SIGKILL a process group that a gone owner left, if it is certainly still
 * that group; true when a signal was sent.
 *
 * Linux: when the leader lives (or is an unreaped zombie) with the recorded
 * start time, or when the leader is gone and live members with its pgid
 * remain — a pid cannot be reused while it is still some process's pgid, so
 * those members are the group's own (unless the whole group died and the
 * number was reused for a new group whose leader also died before the sweep,
 * which this cannot tell). A leader alive with another start time means the
 * pid was reused after the group ended: nothing is sent.
 * Other POSIX systems have no cheap start time: only a group that outlived
 * its leader is killed. Windows: nothing (no process groups; see the docs).
 */
export function killLeftGroup(entry: { pgid: number; start: number }, host: Host): boolean {
  const { pgid } = entry;
  if (host.platform === 'win32') return false;
  if (!Number.isSafeInteger(pgid) || pgid <= 1) return false;
  const send = (target: number) => {
    try {
      host.kill(target, 'SIGKILL');
      return true;
    } catch {
      return false; // ESRCH: nothing left; EPERM: not ours
    }
  };
  if (!hasProcStat(host.platform) || entry.start === 0) {
    if (exists(pgid, host)) return false; // the leader lives: it may be a reused pid
    return send(-pgid);
  }
  const leader = readStat(pgid, host.readProc);
  if (leader === undefined) return false; // cannot tell
  if (leader) {
    if (leader.start !== entry.start) return false;
    const sent = send(-pgid);
    // A leader that moved to a group of its own is still the one we started.
    if (!isDeadState(leader.state) && leader.pgid !== pgid) return send(pgid) || sent;
    return sent;
  }
  const members = groupMembers(pgid, host.listProc, host.readProc);
  if (!members?.some((m) => !isDeadState(m.state))) return false;
  return send(-pgid);
}

function exists(pid: number, host: Host): boolean {
  try {
    host.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * Remove the socket file at `path` if it is still the one recorded (same
 * device and inode); true when it was removed. Any other file there, or a
 * socket bound since by someone else, is left alone.
 */
export function removeSocket(entry: { path: string; dev: string; ino: string }): boolean {
  try {
    const stat = lstatSync(entry.path, { bigint: true });
    if (!stat.isSocket() || String(stat.dev) !== entry.dev || String(stat.ino) !== entry.ino) {
      return false;
    }
    unlinkSync(entry.path);
    return true;
  } catch {
    return false; // gone already
  }
}

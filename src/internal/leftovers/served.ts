import { statSync } from 'node:fs';
import { readStat } from '../proc.js';
import { hasProcStat, realHost } from './host.js';
import { type Owner, ownerGone, processOwner } from './owner.js';
import { recordFor } from './registry.js';
import { removeServerFiles } from './servers.js';

/**
 * What a detached `shimkit serve` needs of the leftover machinery (HT-13):
 * its owner named as the sweep names owners (pid, start time, scope), the
 * check that the owner is gone, and an entry in the owner's registry that
 * lets the sweep (and `shimkit clean`) stop it once the owner is gone. The
 * registry is not public API, so src/cli/server/ imports this module
 * directly (the one place the CLI goes past the public door).
 */

/** Process `pid` as an owner, with its start time now; undefined when it does not run. */
export function ownerOfPid(pid: number): Owner | undefined {
  const host = realHost();
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
  try {
    host.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return undefined;
  }
  let start = 0;
  if (hasProcStat(host.platform)) {
    const stat = readStat(pid);
    if (stat === null) return undefined;
    start = stat?.start ?? 0;
  }
  return { pid, start, scope: host.scope };
}

/** An owner as text (`pid-start-scope`), to hand to the server process; and back. */
export function ownerText(owner: Owner): string {
  return `${owner.pid}-${owner.start}-${owner.scope}`;
}

export function parseOwnerText(text: string | undefined): Owner | undefined {
  const m = /^(\d{1,16})-(\d{1,20})-([0-9a-z]{1,6})$/.exec(text ?? '');
  if (!m) return undefined;
  return { pid: Number(m[1]), start: Number(m[2]), scope: m[3] as string };
}

/** Whether process `pid` runs as this user (where /proc tells; elsewhere assumed). */
function sameUser(pid: number): boolean {
  const uid = process.getuid?.();
  if (uid === undefined || !hasProcStat(process.platform)) return true;
  try {
    return statSync(`/proc/${pid}`).uid === uid;
  } catch {
    return false;
  }
}

/** Whether `owner` is certainly gone (see ownerGone). */
export function isOwnerGone(owner: Owner): boolean {
  return ownerGone(owner);
}

/** A server that stops because its owner is gone leaves nothing: its files in `dir` go, and `dir` if then empty. */
export function removeOwnFiles(dir: string): void {
  removeServerFiles(dir, process.pid, realHost());
}

/**
 * List this process (a detached server in its own group) in `owner`'s
 * registry; returns the removal. Not for an owner of another user (`sudo
 * shimkit serve`, or `--owner-pid` of another user's process): a registry
 * dir this user made under that owner's name would be refused by the owner
 * as another user's (SEC-03). The server still watches such an owner itself.
 */
export function listServer(owner: Owner, dir: string): () => void {
  if (!sameUser(owner.pid)) return () => {};
  const self = processOwner();
  return recordFor(owner, { type: 'server', pid: self.pid, start: self.start, dir });
}

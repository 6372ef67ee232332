import { lstatSync, readdirSync, readFileSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { killLeftGroup } from './groups.js';
import type { Host } from './host.js';
import { unlinkQuietly } from './registry.js';

/**
 * A detached `shimkit serve` whose owner is gone (HT-13): it lists itself
 * in its owner's registry as `{type: 'server', pid, start, dir}`. It stops
 * itself when it sees the owner go (every 500 ms); the sweep does the same
 * for one that has not yet, or could not (stopped, or its owner's death
 * seen first by `shimkit clean`): its process group is killed as any left
 * group (only if its leader is still that process), then its files in its
 * dir go — only while `server.json` still names it — and the dir, if that
 * leaves it empty.
 */

/** What `shimkit serve` writes in its dir (playbook-N.json: a detached server's copies). */
const SERVER_FILE =
  /^(server\.json|server\.lock|control\.sock|server\.log|playbook-\d+\.json|\.server\.lock\.\d+\.(tmp|stale)|server\.json\.\d+\.tmp)$/;

export function stopLeftServer(
  entry: { pid: number; start: number; dir: string },
  host: Host,
  report: { killed: number[]; removed: string[] },
): void {
  if (killLeftGroup({ pgid: entry.pid, start: entry.start }, host)) report.killed.push(entry.pid);
  if (removeServerFiles(entry.dir, entry.pid, host)) report.removed.push(entry.dir);
}

/**
 * Remove the files of the server `pid` from `dir` (only while its
 * server.json names that pid, and the dir is this user's), then the dir
 * if that leaves it empty; true when the dir went.
 */
export function removeServerFiles(dir: string, pid: number, host: Host): boolean {
  if (!ownDir(dir, host) || serverPid(dir) !== pid) return false;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return false;
  }
  // server.json last: while it is there, the files are known to be this server's.
  for (const name of [...names.filter((n) => n !== 'server.json'), 'server.json']) {
    if (SERVER_FILE.test(name)) unlinkQuietly(join(dir, name));
  }
  try {
    rmdirSync(dir); // only when nothing else is in it
    return true;
  } catch {
    return false;
  }
}

/** The pid in `dir/server.json`, if it is one. */
function serverPid(dir: string): number | undefined {
  try {
    const pid = (JSON.parse(readFileSync(join(dir, 'server.json'), 'utf8')) as { pid?: unknown })
      .pid;
    return Number.isSafeInteger(pid) ? (pid as number) : undefined;
  } catch {
    return undefined;
  }
}

function ownDir(path: string, host: Host): boolean {
  try {
    const stat = lstatSync(path);
    return stat.isDirectory() && (host.uid === undefined || stat.uid === host.uid);
  } catch {
    return false;
  }
}

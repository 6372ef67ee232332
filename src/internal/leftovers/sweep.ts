import { existsSync, lstatSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { hostTmpdir } from '../host-tmp.js';
import { removeTree } from '../remove-tree.js';
import { killLeftGroup, removeSocket } from './groups.js';
import { type Host, realHost } from './host.js';
import { type LeftoverName, parseLeftoverName, randomName, rootNameStem } from './names.js';
import { type Owner, ownerGone, processOwner, sameProcess } from './owner.js';
import { type RegistryEntry, readRegistry, unlinkQuietly } from './registry.js';
import { stopLeftServer } from './servers.js';

/**
 * The sweep (requirement SP-11): temp roots, registries, process groups and socket
 * files whose owner is gone are removed. Only what is certainly a gone
 * owner's is touched; see {@link ownerGone} and {@link killLeftGroup}.
 */

/** What a sweep did. */
export interface SweepReport {
  /** Temp roots removed (mock bin dirs, sandboxes, trash). */
  removed: string[];
  /** Process groups sent SIGKILL, by pgid. */
  killed: number[];
  /** Unix socket files removed. */
  sockets: string[];
  /** What could not be removed, with the reason. */
  failed: { path: string; reason: string }[];
}

/** A file in a temp root that `keep: true` leaves: the sweep does not remove that root. */
export const KEEP_MARKER = '.shimkit-keep';

/** Mark `root` as kept (best effort). */
export function markKept(root: string): void {
  try {
    writeFileSync(
      join(root, KEEP_MARKER),
      'Kept by shimkit (keep: true): the leftover sweep leaves this dir alone. Delete it yourself.\n',
      { mode: 0o600 },
    );
  } catch {}
}

/**
 * Sweep each of `parents` (temp parent dirs) once: the registries of gone
 * owners first (their process groups, sockets and dirs elsewhere), then the
 * roots named after gone owners. Never throws; failures are in the report.
 */
export function sweepDirs(parents: readonly string[], host: Host = realHost()): SweepReport {
  const report: SweepReport = { removed: [], killed: [], sockets: [], failed: [] };
  const verdicts = new Map<string, boolean>();
  const gone = (owner: Owner) => {
    const key = JSON.stringify(owner);
    let verdict = verdicts.get(key);
    if (verdict === undefined) {
      verdict = ownerGone(owner, host);
      verdicts.set(key, verdict);
    }
    return verdict;
  };
  const roots: { path: string; owner: Owner }[] = [];
  for (const parent of parents) {
    for (const { path, name } of leftoversIn(parent)) {
      if (!gone(name.owner)) continue;
      if (name.type === 'registry') sweepRegistry(path, name.owner, host, report);
      else roots.push({ path, owner: name.owner });
    }
  }
  for (const root of roots) removeRoot(root.path, host, report);
  return report;
}

/** The shimkit names in `parent`, parsed. */
function leftoversIn(parent: string): { path: string; name: LeftoverName }[] {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return []; // missing, or not ours to read
  }
  const found: { path: string; name: LeftoverName }[] = [];
  for (const entry of names) {
    if (!entry.startsWith('shimkit-')) continue;
    const name = parseLeftoverName(entry);
    if (name) found.push({ path: join(parent, entry), name });
  }
  return found;
}

/** Process one gone owner's registry: groups, then sockets, then dirs; then the registry itself. */
function sweepRegistry(dir: string, owner: Owner, host: Host, report: SweepReport): void {
  if (!ours(dir, host)) return;
  const order: Record<RegistryEntry['type'], number> = { server: 0, group: 1, socket: 2, dir: 3 };
  const entries = readRegistry(dir).sort(
    (a, b) => (a.entry ? order[a.entry.type] : 4) - (b.entry ? order[b.entry.type] : 4),
  );
  for (const { file, entry } of entries) {
    if (entry?.type === 'server') {
      stopLeftServer(entry, host, report);
    } else if (entry?.type === 'group') {
      if (killLeftGroup(entry, host)) report.killed.push(entry.pgid);
    } else if (entry?.type === 'socket') {
      if (removeSocket(entry)) report.sockets.push(entry.path);
    } else if (entry?.type === 'dir') {
      const name = parseLeftoverName(basename(entry.path));
      // Only a root that carries this very owner in its name: a registry cannot point elsewhere.
      if (name?.type === 'root' && sameProcess(name.owner, owner)) {
        if (!removeRoot(entry.path, host, report)) continue; // keep the entry to try again
      }
    }
    unlinkQuietly(file); // handled, or garbage
  }
  try {
    rmdirSync(dir);
  } catch {}
}

/** Remove one root unless it is another user's, not a dir, or kept. False when removing failed. */
function removeRoot(path: string, host: Host, report: SweepReport): boolean {
  if (!ours(path, host) || existsSync(join(path, KEEP_MARKER))) return true;
  try {
    if (!removeTree(path, `${rootNameStem('trash', processOwner())}${randomName()}`)) return true;
  } catch (error) {
    report.failed.push({ path, reason: (error as Error).message });
    return false;
  }
  if (existsSync(path)) {
    report.failed.push({ path, reason: 'still there after removal' });
    return false;
  }
  report.removed.push(path);
  return true;
}

/** Whether `path` is a real dir (not a link) owned by this user. */
function ours(path: string, host: Host): boolean {
  try {
    const stat = lstatSync(path);
    return stat.isDirectory() && (host.uid === undefined || stat.uid === host.uid);
  } catch {
    return false;
  }
}

let sweptTmp = false;
const sweptParents = new Set<string>();

/**
 * The lazy sweep, on the first shimkit use in this process (per thread):
 * `os.tmpdir()` once, and each custom temp parent the first time it is used.
 * `SHIMKIT_SWEEP=0` turns it off. Never throws.
 */
export function sweepOnce(parent?: string): void {
  if (process.env.SHIMKIT_SWEEP === '0') return;
  try {
    const parents: string[] = [];
    const tmp = resolve(hostTmpdir());
    if (!sweptTmp) {
      sweptTmp = true;
      parents.push(tmp);
    }
    if (parent !== undefined) {
      const dir = resolve(parent);
      if (dir !== tmp && !sweptParents.has(dir)) {
        sweptParents.add(dir);
        parents.push(dir);
      }
    }
    if (parents.length > 0) sweepDirs(parents);
  } catch {
    // The sweep is a safety net; it must never fail the test.
  }
}

import { randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, readFileSync, rmdirSync, unlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeFileAtomic } from '../atomic.js';
import { onProcessExit } from '../exit-cleanup.js';
import { hostTmpdir } from '../host-tmp.js';
import { assertOwnDir, NotOwnedError } from '../owner.js';
import { readStat } from '../proc.js';
import { hasProcStat } from './host.js';
import { registryName } from './names.js';
import { type Owner, processOwner, threadOwner } from './owner.js';

/**
 * The registry: a small dir per owner in `os.tmpdir()`
 * (`shimkit-owner-<pid>-<start>-<scope>[-<tid>-<tstart>]`) listing what the
 * owner made that its name-tagged roots do not show: process groups, socket
 * files, and roots outside `os.tmpdir()` (or, in a worker thread, all of its
 * roots). One JSON file per thing, written whole (temp file, then rename),
 * removed when the thing is disposed, closed or reaped; the dir goes with
 * its last entry. Recording is best effort: a registry that cannot be
 * written must not fail the test, it only loses the safety net. Its name is
 * predictable, so a registry dir another user made first (or a link there)
 * is never written to (requirement SEC-03): a warning names its owner.
 */

/** One thing an owner made. */
export type RegistryEntry =
  | { type: 'group'; pgid: number; start: number }
  | { type: 'socket'; path: string; dev: string; ino: string }
  | { type: 'dir'; path: string }
  /** A detached `shimkit serve` this owner started (see served.ts): its pid (its group's leader), start time and dir. */
  | { type: 'server'; pid: number; start: number; dir: string };

let registryDir: string | undefined;
const live = new Set<string>();
let forgetExit: (() => void) | undefined;

/** This thread's registry dir (created on the first entry). */
function ownDir(): string {
  registryDir ??= join(hostTmpdir(), registryName(threadOwner() ?? processOwner()));
  return registryDir;
}

/** Record `entry`; the returned function removes it again (idempotent). */
export function record(entry: RegistryEntry): () => void {
  const name = `${entry.type}-${randomBytes(6).toString('hex')}`;
  const dir = ownDir();
  if (!write(dir, name, JSON.stringify(entry))) return () => {};
  live.add(name);
  forgetExit ??= onProcessExit(removeAll);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    live.delete(name);
    unlinkQuietly(join(dir, name));
    if (live.size === 0) {
      rmdirQuietly(dir); // fails while another thread's module still has entries in it
      forgetExit?.();
      forgetExit = undefined;
    }
  };
}

/**
 * Write one entry whole. Tried twice: another thread of this process may
 * remove the (then empty) dir between our mkdir and our write.
 */
function write(dir: string, name: string, text: string): boolean {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      assertOwnDir(dir, 'The leftover registry dir', {
        advice: 'It is named after this process, so it was made there on purpose: remove it.',
      });
      writeFileAtomic(join(dir, name), text);
      return true;
    } catch (error) {
      if (error instanceof NotOwnedError) {
        warnNotOwned(error);
        return false;
      }
    }
  }
  return false;
}

const warned = new Set<string>();

function warnNotOwned(error: NotOwnedError): void {
  if (warned.has(error.path)) return;
  warned.add(error.path);
  process.emitWarning(
    `${error.message} Until then, shimkit records nothing there: if this process is killed, the leftover sweep cannot find its process groups, sockets and dirs outside os.tmpdir().`,
    { code: error.code },
  );
}

/**
 * Record `entry` in the registry of another process, `owner` (a detached
 * `shimkit serve` lists itself in the registry of the process that started
 * it, so that the sweep stops it once that owner is gone). The returned
 * function removes it again, and the dir when it is then empty. Best effort.
 */
export function recordFor(owner: Owner, entry: RegistryEntry): () => void {
  const dir = join(hostTmpdir(), registryName(owner));
  const name = `${entry.type}-${randomBytes(6).toString('hex')}`;
  if (!write(dir, name, JSON.stringify(entry))) return () => {};
  let done = false;
  return () => {
    if (done) return;
    done = true;
    unlinkQuietly(join(dir, name));
    rmdirQuietly(dir); // fails while the owner (or another server of it) still has entries
  };
}

/** At exit: this module's entries go (their things were just cleaned up), then the dir if empty. */
function removeAll(): void {
  if (!registryDir) return;
  for (const name of live) unlinkQuietly(join(registryDir, name));
  live.clear();
  rmdirQuietly(registryDir);
}

/** Record the process group led by `pgid` (just spawned) with its leader's start time. */
export function recordGroup(pgid: number, platform: NodeJS.Platform): () => void {
  if (platform === 'win32') return () => {}; // no groups to kill there
  const stat = hasProcStat(platform) ? readStat(pgid) : undefined;
  return record({ type: 'group', pgid, start: stat?.start ?? 0 });
}

/** Record the Unix socket file at `path` (just bound), by absolute path, device and inode. */
export function recordSocket(path: string): () => void {
  try {
    const stat = lstatSync(path, { bigint: true });
    const absolute = resolve(path);
    return record({ type: 'socket', path: absolute, dev: String(stat.dev), ino: String(stat.ino) });
  } catch {
    return () => {};
  }
}

/** Record a temp root at `path` (absolute). */
export function recordDir(path: string): () => void {
  return record({ type: 'dir', path });
}

/** The entries of a registry dir, with the file each came from; unreadable ones as undefined. */
export function readRegistry(dir: string): { file: string; entry: RegistryEntry | undefined }[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.map((name) => {
    const file = join(dir, name);
    let entry: RegistryEntry | undefined;
    try {
      entry = parseEntry(JSON.parse(readFileSync(file, 'utf8')));
    } catch {}
    return { file, entry };
  });
}

/** Check the shape of one parsed entry; undefined when it is not one. */
export function parseEntry(value: unknown): RegistryEntry | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const int = (x: unknown) => Number.isSafeInteger(x) && (x as number) >= 0;
  const text = (x: unknown) => typeof x === 'string' && x !== '' && !x.includes('\0');
  if (v.type === 'group' && int(v.pgid) && int(v.start)) {
    return { type: 'group', pgid: v.pgid as number, start: v.start as number };
  }
  if (
    v.type === 'socket' &&
    text(v.path) &&
    /^\d+$/.test(String(v.dev)) &&
    /^\d+$/.test(String(v.ino))
  ) {
    return { type: 'socket', path: v.path as string, dev: String(v.dev), ino: String(v.ino) };
  }
  if (v.type === 'dir' && text(v.path)) return { type: 'dir', path: v.path as string };
  if (v.type === 'server' && int(v.pid) && int(v.start) && text(v.dir)) {
    return { type: 'server', pid: v.pid as number, start: v.start as number, dir: v.dir as string };
  }
  return undefined;
}

export function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {}
}

function rmdirQuietly(path: string): void {
  try {
    rmdirSync(path);
  } catch {}
}

import { randomBytes } from 'node:crypto';
import { chmodSync, type Dirent, existsSync, lstatSync, readdirSync, rmSync } from 'node:fs';
import { basename, join, sep } from 'node:path';
import { displayName } from '../internal/display-name.js';
import { removeTree } from '../internal/remove-tree.js';

/**
 * A test's own temp dir (LK-03): each scope gets a private dir that its
 * `TMPDIR` points at, inherited by what it starts; at the scope's end what
 * is left in it is listed, then the dir is removed whole.
 *
 * Names in it are read as bytes (a name with a newline or bytes that are not
 * UTF-8 is listed and removed like any other) and shown with `displayName`.
 */

/** What an entry left in a scope's temp dir is. */
export type LeftKind = 'file' | 'dir' | 'symlink' | 'socket' | 'fifo' | 'other';

/** One top-level entry left in a scope's temp dir. */
export interface LeftEntry {
  /** Its name (relative to the dir), made readable: control characters and bytes that are not UTF-8 as `\xNN`. */
  path: string;
  kind: LeftKind;
  /** A file's size. */
  bytes?: number;
  /** A dir's entries at any depth below it (as far as the walk went). */
  inside?: number;
}

/** What `leftIn` found. */
export interface Leftovers {
  /** Top-level entries, by name, at most `limit` of them. */
  entries: LeftEntry[];
  /** Every entry found, at any depth. */
  total: number;
  /** False when the walk stopped at its bound, or a dir could not be read: `total` is then a lower bound. */
  complete: boolean;
}

/** Entries read at most by one `leftIn`: the report says so when there are more. */
export const WALK_LIMIT = 5000;

/**
 * What is left in `dir`: its top-level entries (the first `limit` by name,
 * each with its kind, a file's size, a dir's count of entries below it) and
 * the count of every entry at any depth. Symlinks are listed, never
 * followed. Reads at most `WALK_LIMIT` entries, then stops and says so
 * (`complete: false`). A dir that does not exist has nothing left.
 * @example
 * const left = leftIn(tmp);
 * if (left.total > 0) console.warn(left.entries.map((e) => e.path));
 */
export function leftIn(dir: string, limit = 20): Leftovers {
  const root = Buffer.from(dir);
  let top: Dirent<Buffer>[];
  try {
    top = readdirSync(root, { withFileTypes: true, encoding: 'buffer' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return { entries: [], total: 0, complete: true };
    }
    return { entries: [], total: 0, complete: false };
  }
  top.sort((a, b) => Buffer.compare(a.name, b.name));
  let total = Math.min(top.length, WALK_LIMIT);
  let complete = top.length <= WALK_LIMIT;
  const inside = new Array<number>(top.length).fill(0);
  // Depth first, each dir tagged with the top-level entry it is under.
  const stack: [Buffer, number][] = [];
  for (let i = top.length - 1; i >= 0; i -= 1) {
    const entry = top[i];
    if (entry?.isDirectory()) stack.push([child(root, entry.name), i]);
  }
  while (stack.length > 0 && complete) {
    const [path, under] = stack.pop() as [Buffer, number];
    let names: Dirent<Buffer>[];
    try {
      names = readdirSync(path, { withFileTypes: true, encoding: 'buffer' });
    } catch (error) {
      // Removed meanwhile: nothing left there. Unreadable, or too long a path: not counted.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') complete = false;
      continue;
    }
    for (const entry of names) {
      if (total >= WALK_LIMIT) {
        complete = false;
        break;
      }
      total += 1;
      inside[under] = (inside[under] ?? 0) + 1;
      if (entry.isDirectory()) stack.push([child(path, entry.name), under]);
    }
  }
  const entries = top.slice(0, Math.max(0, limit)).map((entry, i): LeftEntry => {
    const kind = kindOf(entry);
    const left: LeftEntry = { path: displayName(entry.name), kind };
    if (kind === 'file') {
      try {
        left.bytes = lstatSync(child(root, entry.name)).size;
      } catch {
        // removed meanwhile
      }
    }
    if (kind === 'dir') left.inside = inside[i] ?? 0;
    return left;
  });
  return { entries, total, complete };
}

function child(parent: Buffer, name: Buffer): Buffer {
  return Buffer.concat([parent, Buffer.from(sep), name]);
}

function kindOf(entry: Dirent<Buffer>): LeftKind {
  if (entry.isFile()) return 'file';
  if (entry.isDirectory()) return 'dir';
  if (entry.isSymbolicLink()) return 'symlink';
  if (entry.isSocket()) return 'socket';
  if (entry.isFIFO()) return 'fifo';
  return 'other';
}

/**
 * Remove a scope's temp dir whole: renamed out of the way first (a process
 * still writing into it then fails instead of racing the delete), then
 * deleted; symlinks in it are removed, never followed. Entries removed
 * meanwhile by someone else are no error. A dir made read-only in it (which
 * stops a delete, except for root) is made writable again (dirs only, found
 * with lstat: a symlink is never chmodded) and the delete done again.
 * Returns false when there was nothing to remove.
 */
export function removeScopeTmp(dir: string): boolean {
  const trash = join(dir, '..', `.${basename(dir)}-trash-${randomBytes(4).toString('hex')}`);
  try {
    return removeTree(dir, basename(trash));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EACCES' && code !== 'EPERM') throw error;
    const at = existsSync(trash) ? trash : dir;
    makeDirsWritable(Buffer.from(at));
    rmSync(at, { recursive: true, force: true, maxRetries: 5, retryDelay: 10 });
    return true;
  }
}

/** chmod u+rwx every dir in the tree at `root` (not through symlinks). */
function makeDirsWritable(root: Buffer): void {
  const stack = [root];
  while (stack.length > 0) {
    const path = stack.pop() as Buffer;
    try {
      const stat = lstatSync(path);
      if (!stat.isDirectory()) continue;
      chmodSync(path, (stat.mode & 0o7777) | 0o700);
      for (const name of readdirSync(path, { encoding: 'buffer' })) stack.push(child(path, name));
    } catch {
      // removed meanwhile, or not ours to change: the delete says what is left
    }
  }
}

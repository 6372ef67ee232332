import {
  closeSync,
  fchmodSync,
  linkSync,
  openSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { sep } from 'node:path';

/**
 * The file operations the protocol is built from (and everything else
 * shimkit writes: requirement SEC-01, SEC-03). Each leaves nothing behind
 * when it fails (no temp file, no half-written file under a real name), so a
 * full disk costs a diagnostic and never litter. Temp files are created
 * exclusively (O_EXCL: a planted file or symlink is never followed) under a
 * name with a random part, and get their mode exactly, whatever the umask.
 */

let counter = 0;

/**
 * A temp name beside `target`; readers skip dot-files. The random part keeps
 * a later process that gets the same pid clear of a temp file a killed one
 * left behind.
 */
function tempPathFor(target: string): string {
  counter += 1;
  const cut = target.lastIndexOf(sep) + 1;
  const unique = `${process.pid}.${counter}.${Math.random().toString(36).slice(2, 8)}`;
  return `${target.slice(0, cut)}.${target.slice(cut)}.${unique}.tmp`;
}

/**
 * Replace `target` so that a reader sees either the old or the new content,
 * never a part. The file is `mode` (0600, or 0700 for a shim) under any umask.
 */
export function writeFileAtomic(target: string, data: string | Uint8Array, mode = 0o600): void {
  const { fd, path } = createTemp(target, data, mode);
  try {
    closeSync(fd);
    renameSync(path, target);
  } catch (error) {
    tryUnlink(path);
    throw error;
  }
}

/**
 * A new temp file holding `data`, open for appending more: the fd stays open
 * so later lines cost one write each. The caller links it into place and
 * unlinks the temp name.
 */
export function createTemp(
  besides: string,
  data: string | Uint8Array,
  mode = 0o600,
): { fd: number; path: string } {
  const { fd, path } = openTemp(besides, mode);
  try {
    fchmodSync(fd, mode); // the umask took bits off at open
    writeBytes(fd, typeof data === 'string' ? Buffer.from(data) : data);
    return { fd, path };
  } catch (error) {
    closeSync(fd);
    tryUnlink(path);
    throw error;
  }
}

/**
 * Open a new temp file beside `besides`, exclusively. A name that exists
 * (left by a killed process, or planted) is passed over for a fresh one.
 */
function openTemp(besides: string, mode: number): { fd: number; path: string } {
  for (let attempt = 1; ; attempt++) {
    const path = tempPathFor(besides);
    try {
      return { fd: openSync(path, 'wx', mode), path };
    } catch (error) {
      if (errnoCode(error) !== 'EEXIST' || attempt === 5) throw error;
    }
  }
}

/** Hard-link `existing` as `target` unless `target` exists (then return false). */
export function linkExclusive(existing: string, target: string): boolean {
  try {
    linkSync(existing, target);
    return true;
  } catch (error) {
    if (errnoCode(error) === 'EEXIST') return false;
    throw error;
  }
}

/** Write all of `data` at the fd's position (appending, for a file opened to append). */
export function writeBytes(fd: number, data: Uint8Array): void {
  let offset = 0;
  while (offset < data.length) offset += writeSync(fd, data, offset, data.length - offset);
}

export function tryUnlink(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

export function tryClose(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Closed already.
  }
}

import {
  closeSync,
  linkSync,
  openSync,
  renameSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { sep } from 'node:path';
import { errnoCode } from './errors.js';

/**
 * The file operations the protocol is built from. Each leaves nothing behind
 * when it fails (no temp file, no half-written file under a real name), so a
 * full disk costs a diagnostic and never litter.
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

/** Replace `target` so that a reader sees either the old or the new content, never a part. */
export function writeFileAtomic(target: string, data: string): void {
  const temp = tempPathFor(target);
  try {
    writeFileSync(temp, data, { mode: 0o600, flag: 'wx' });
    renameSync(temp, target);
  } catch (error) {
    tryUnlink(temp);
    throw error;
  }
}

/**
 * A new temp file holding `data`, open for appending more: the fd stays open
 * so later lines cost one write each. The caller links it into place and
 * unlinks the temp name.
 */
export function createTemp(besides: string, data: string): { fd: number; path: string } {
  const path = tempPathFor(besides);
  let fd: number | undefined;
  try {
    fd = openSync(path, 'wx', 0o600);
    writeBytes(fd, Buffer.from(data));
    return { fd, path };
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    tryUnlink(path);
    throw error;
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

export function tryClose(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Closed already.
  }
}

import { linkSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { errnoCode } from './errors.js';

let counter = 0;

/** A temp name beside `target`, unique to this process; readers skip dot-files. */
export function tempPathFor(target: string): string {
  counter += 1;
  return join(dirname(target), `.${basename(target)}.${process.pid}.${counter}.tmp`);
}

/** Replace `target` so that a reader sees either the old or the new content, never a part. */
export function writeFileAtomic(target: string, data: string): void {
  const temp = tempPathFor(target);
  try {
    writeFileSync(temp, data, { mode: 0o600 });
    renameSync(temp, target);
  } catch (error) {
    tryUnlink(temp);
    throw error;
  }
}

/**
 * Create `target` with `data` only if it does not exist yet, and atomically:
 * the content is written to a temp file first and hard-linked into place, so
 * the file is never visible empty or half-written. Returns false if `target`
 * already exists (someone else created it first).
 */
export function publishExclusive(target: string, data: string): boolean {
  const temp = tempPathFor(target);
  writeFileSync(temp, data, { mode: 0o600 });
  try {
    return linkExclusive(temp, target);
  } finally {
    tryUnlink(temp);
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

export function tryUnlink(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}

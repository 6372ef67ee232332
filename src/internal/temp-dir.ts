import { renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import tmp from 'tmp';
import { onProcessExit } from './exit-cleanup.js';

/** A private (0700) temp dir that is removed on `remove()` or when the process exits. */
export interface TempDir {
  readonly path: string;
  /** Delete it now (idempotent). */
  remove(): void;
  /** Keep it after exit (for debugging); it will not be removed by the exit handler. */
  keep(): void;
}

export function createTempDir(prefix: string, parent?: string): TempDir {
  const path = tmp.dirSync({ prefix, mode: 0o700, ...(parent ? { tmpdir: parent } : {}) }).name;
  let removed = false;
  const forget = onProcessExit(() => removeTree(path));
  return {
    path,
    remove() {
      if (removed) return;
      removed = true;
      forget();
      removeTree(path);
    },
    keep() {
      forget();
    },
  };
}

/**
 * Remove a directory tree even while shims may still be writing into it: first
 * rename it out of the way (a running shim then fails to create files there
 * instead of racing the delete), then delete it.
 */
export function removeTree(path: string): void {
  const trash = join(dirname(path), `.trash-${process.pid}-${Math.random().toString(36).slice(2)}`);
  let target = path;
  try {
    renameSync(path, trash);
    target = trash;
  } catch {
    // Missing already, or not renameable: delete in place.
  }
  rmSync(target, { recursive: true, force: true, maxRetries: 5, retryDelay: 10 });
}

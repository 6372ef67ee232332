import tmp from 'tmp';
import { onProcessExit } from './exit-cleanup.js';
import { removeTree } from './remove-tree.js';

export { removeTree } from './remove-tree.js';

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

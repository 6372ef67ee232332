import { renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * Remove a directory tree even while shims may still be writing into it: first
 * rename it out of the way (a running shim then fails to create files there
 * instead of racing the delete), then delete it. `trashName` names the
 * renamed dir (default `.trash-<pid>-<random>`); temp roots pass a name that
 * carries their owner, so that a process killed mid-delete leaves something
 * the leftover sweep recognises. Returns false when there was nothing to
 * remove (another process may have just taken it).
 */
export function removeTree(path: string, trashName?: string): boolean {
  const name = trashName ?? `.trash-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const trash = join(dirname(path), name);
  let target = path;
  try {
    renameSync(path, trash);
    target = trash;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    // Not renameable: delete in place.
  }
  try {
    rmSync(target, { recursive: true, force: true, maxRetries: 5, retryDelay: 10 });
  } catch (error) {
    // Windows: a call still running holds files open, and its dir cannot go
    // until it exits. Renamed away, the tree is already out of every path
    // anyone uses: finish in the background (the leftover sweep knows the name).
    if (target !== trash || !busyOnWindows(error)) throw error;
    finishLater(trash);
  }
  return true;
}

function busyOnWindows(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return process.platform === 'win32' && ['ENOTEMPTY', 'EBUSY', 'EPERM'].includes(code ?? '');
}

/** Retry the delete every 200 ms for up to 30 s, without keeping Node alive. */
function finishLater(path: string, attempt = 1): void {
  const timer = setTimeout(() => {
    try {
      rmSync(path, { recursive: true, force: true });
    } catch {
      if (attempt < 150) finishLater(path, attempt + 1);
    }
  }, 200);
  timer.unref();
}

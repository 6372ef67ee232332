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
  rmSync(target, { recursive: true, force: true, maxRetries: 5, retryDelay: 10 });
  return true;
}

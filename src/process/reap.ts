import { onProcessExit } from '../internal/exit-cleanup.js';
import { recordGroup } from '../internal/leftovers/registry.js';
import { groupAlive, killTreeSync, signalGroup, taskkill } from './kill.js';
import { until } from './poll.js';

const REAP_LIMIT_MS = 5000;

/**
 * End the tree of `pid` for `close()`. POSIX: SIGTERM to the group, poll until
 * the child has exited (`running()` false) and no live member is left,
 * SIGKILL after `graceMs`, and poll again for at most 5 s. Windows:
 * `taskkill /T /F` while the child still runs (there is no graceful stage).
 */
export async function endTree(
  pid: number,
  platform: NodeJS.Platform,
  graceMs: number,
  running: () => boolean,
): Promise<void> {
  if (pid === 0) return;
  if (platform === 'win32') {
    if (running()) await taskkill(pid, process.env); // the test process's SystemRoot
    return;
  }
  if (!signalGroup(pid, 'SIGTERM')) return;
  const gone = () => !running() && !groupAlive(pid);
  if (!(await until(gone, graceMs))) {
    signalGroup(pid, 'SIGKILL');
    await until(gone, REAP_LIMIT_MS);
  }
}

/**
 * SIGKILL the tree of `pid` if the test process exits first, and record its
 * group in the registry for the leftover sweep (requirement SP-11) in case the test
 * process dies where no exit hook can run. Returns the function that forgets
 * both (idempotent).
 */
export function killTreeOnExit(pid: number, platform: NodeJS.Platform): () => void {
  const unrecord = recordGroup(pid, platform);
  // taskkill is found through the test process's own SystemRoot, not the child's env.
  const forget = onProcessExit(() => killTreeSync(pid, platform, process.env));
  return () => {
    forget();
    unrecord();
  };
}

/**
 * Whether the exit hook can go once the child exited: grandchildren may live
 * on in its group (POSIX), so it stays until they are gone.
 */
export function treeGone(pid: number, platform: NodeJS.Platform): boolean {
  return platform === 'win32' || !groupAlive(pid);
}

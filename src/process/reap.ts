import { onProcessExit } from '../internal/exit-cleanup.js';
import { recordGroup } from '../internal/leftovers/registry.js';
import { ProcessNotEndedError } from './errors.js';
import {
  groupAlive,
  killSession,
  killTreeSync,
  sessionAlive,
  signalGroup,
  taskkill,
} from './kill.js';
import { until } from './poll.js';

const REAP_LIMIT_MS = 5000;

/** What `endTree` needs to know about the child. */
export interface TreeChild {
  pid: number;
  /** Whether the child itself has not exited yet. */
  running(): boolean;
  /** End the child itself (not its tree): the Windows fallback. */
  terminate(): void;
  /** For messages. */
  commandLine: string;
}

/**
 * End the tree of a child for `close()`. POSIX: SIGTERM to the group, poll
 * until the child has exited and no live member is left, SIGKILL after
 * `graceMs`, and poll again for at most 5 s. Windows: `taskkill /T /F` while
 * the child still runs (there is no graceful stage), bounded; if taskkill
 * cannot run, fails, or the child still runs 5 s later, the child itself is
 * terminated and a warning says that what it started may live on. Throws
 * `ProcessNotEndedError` if even that leaves the child running. `reapLimitMs`
 * (5 s) bounds each of those waits; tests pass a shorter one.
 */
export async function endTree(
  child: TreeChild,
  platform: NodeJS.Platform,
  graceMs: number,
  reapLimitMs = REAP_LIMIT_MS,
): Promise<void> {
  const { pid, running } = child;
  if (pid === 0) return;
  if (platform === 'win32') {
    if (!running()) return;
    const problem = await taskkill(pid, process.env); // the test process's SystemRoot
    if (!problem && (await until(() => !running(), reapLimitMs))) return;
    const why = problem ?? `the process still ran ${reapLimitMs} ms after taskkill`;
    child.terminate();
    if (!(await until(() => !running(), reapLimitMs))) {
      throw new ProcessNotEndedError(child.commandLine, pid, why);
    }
    process.emitWarning(
      `shimkit: ${child.commandLine} (pid ${pid}) was ended by itself, not with its tree: ${why}. Processes it started may still run; check SystemRoot (taskkill is run from %SystemRoot%\\System32).`,
      { code: 'SHIMKIT_TREE_NOT_ENDED' },
    );
    return;
  }
  if (!signalGroup(pid, 'SIGTERM')) return;
  const gone = () => !running() && !groupAlive(pid);
  if (!(await until(gone, graceMs))) {
    signalGroup(pid, 'SIGKILL');
    await until(gone, reapLimitMs);
  }
}

/**
 * SIGKILL the tree of `pid` if the test process exits first (with `session`,
 * also what is left in the session `pid` leads: a PTY's), and record its
 * group in the registry for the leftover sweep (requirement SP-11) in case the test
 * process dies where no exit hook can run. Returns the function that forgets
 * both (idempotent).
 */
export function killTreeOnExit(
  pid: number,
  platform: NodeJS.Platform,
  session?: { leaderStart: number },
): () => void {
  const unrecord = recordGroup(pid, platform);
  // taskkill is found through the test process's own SystemRoot, not the child's env.
  const forget = onProcessExit(() => {
    killTreeSync(pid, platform, process.env);
    if (session && pid > 0) killSession(pid, session.leaderStart); // a PTY's: jobs in groups of their own
  });
  return () => {
    forget();
    unrecord();
  };
}

/**
 * Whether the exit hook can go once the child exited: grandchildren may live
 * on in its group (POSIX), so it stays until they are gone; with `session`
 * (a PTY's helper leads one), until the session is empty too.
 */
export function treeGone(pid: number, platform: NodeJS.Platform, session = false): boolean {
  if (platform === 'win32') return true;
  return !groupAlive(pid) && !(session && sessionAlive(pid));
}

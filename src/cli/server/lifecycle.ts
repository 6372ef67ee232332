import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { MockServer } from 'shimkit';
import type { Owner } from '../../internal/leftovers/owner.js';
import { isOwnerGone, listServer } from '../../internal/leftovers/served.js';
import { UsageError } from '../exit-codes.js';

/**
 * How a `shimkit serve` ends without `shimkit stop` (HT-13): when its owner
 * is gone, or after an idle time with no request and no command.
 *
 * The owner of `serve --detach` is the process that ran it (its parent —
 * the test, the shell that evals its lines; past the subshell of a command
 * substitution, a fork with its parent's command line), seen through package runners:
 * under `npx shimkit …`, `npm exec`, `pnpm exec`, `yarn` or `bunx` the runner
 * (and a `sh -c` it ran the bin with) exits or lives with the command, so
 * the owner is the process that ran the runner. `--owner-pid PID` names
 * another (a CI job's shell, say), `--owner-pid 0` none. A foreground
 * `serve` watches an owner only when given `--owner-pid`.
 */

/** The default idle time: 30 minutes without a request or a command. */
export const DEFAULT_IDLE_MS = 30 * 60_000;

const RUNNERS = /^(npm|npx|pnpm|pnpx|yarn|yarnpkg|bun|bunx|corepack)$/;
const RUNNER_SCRIPT = /(?:^|\/)(npm|npx|pnpm|pnpx|yarn)(-cli)?\.(c?js|mjs)$/;
const SHELLS = /^(sh|bash|dash|zsh|ash|busybox)$/;

/**
 * The pid that owns a `serve --detach` run by this process: the parent, or
 * past a package runner (Linux; elsewhere the parent as it is).
 */
export function callerPid(
  ppid: number = process.ppid,
  read: (path: string) => string | undefined = readQuietly,
): number {
  let pid = ppid;
  for (let step = 0; step < 8; step++) {
    const argv = read(`/proc/${pid}/cmdline`) ?? '';
    const parent = parentOf(pid, read);
    if (parent === undefined || parent <= 1) return pid;
    const parentArgv = read(`/proc/${parent}/cmdline`) ?? '';
    // A fork that did not exec — the subshell of `$(shimkit serve …)` when bash cannot exec in
    // place (bats, traps) — has its parent's very command line, and ends with the substitution.
    if (argv !== '' && argv === parentArgv) {
      pid = parent;
      continue;
    }
    if (isRunner(argv.split('\0'))) {
      pid = parent;
      continue;
    }
    // `sh -c 'shimkit …'`, as a runner starts a bin: its owner is the runner's.
    const words = argv.split('\0');
    const shell = SHELLS.test(basename(words[0]?.split(' ')[0] ?? '')) && words[1] === '-c';
    if (shell && isRunner(parentArgv.split('\0'))) {
      pid = parent;
      continue;
    }
    return pid;
  }
  return pid;
}

function isRunner(argv: string[]): boolean {
  // A runner may have set its process title ("npm exec shimkit serve"): the first word counts.
  const first = basename(argv[0]?.split(' ')[0] ?? '');
  if (RUNNERS.test(first)) return true;
  return /^node(js)?$/.test(first) && RUNNER_SCRIPT.test(argv[1] ?? '');
}

function parentOf(pid: number, read: (path: string) => string | undefined): number | undefined {
  const stat = read(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  return Number.isSafeInteger(ppid) ? ppid : undefined;
}

function readQuietly(path: string): string | undefined {
  try {
    return readFileSync(path, 'latin1');
  } catch {
    return undefined;
  }
}

/** `--idle-timeout`: `30m`, `90s`, `2h`, `500ms`, or `0` (never) → milliseconds. */
export function idleTimeoutMs(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(text.trim());
  if (text.trim() === '0') return 0;
  if (!match) {
    throw new UsageError(
      'serve',
      `--idle-timeout takes a duration with its unit, such as 30m, 90s, 2h or 500ms, or 0 for none; got ${JSON.stringify(text)}.`,
    );
  }
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] as 'ms' | 's' | 'm' | 'h'];
  return Math.max(1, Math.round(Number(match[1]) * unit));
}

/** `1800000` → `30m`, for the messages. */
export function durationText(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

export interface Lifecycle {
  /** A control command came: the idle time starts again. */
  touch(): void;
  /** Why the server should stop now (a sentence), or undefined. */
  check(): string | undefined;
  /** Whether it stopped because its owner is gone (then it leaves nothing in its dir). */
  readonly ownerGone: boolean;
  /** Take the server out of its owner's registry (it is stopping by itself). */
  release(): void;
}

/**
 * Watch `owner` (if any) and the idle time (0: none) of `api`, a server
 * in `dir`. A request counts as activity when it arrives and while its
 * response is still being written.
 */
export function watchLifecycle(
  api: MockServer,
  dir: string,
  owner: Owner | undefined,
  idleMs: number,
): Lifecycle {
  const unlist = owner ? listServer(owner, dir) : () => {};
  let last = Date.now();
  let seen: unknown;
  let gone = false;
  return {
    get ownerGone() {
      return gone;
    },
    touch: () => {
      last = Date.now();
    },
    check: () => {
      if (owner && isOwnerGone(owner)) {
        gone = true;
        return `its owner, process ${owner.pid}, is gone (it started \`shimkit serve --detach\`; pass --owner-pid to choose another)`;
      }
      if (idleMs === 0) return undefined;
      let entry: ReturnType<MockServer['lastRequest']>;
      try {
        entry = api.lastRequest();
      } catch {
        entry = undefined; // a failed worker: the control commands say so; idle time runs on
      }
      if (entry !== undefined && (entry !== seen || entry.response?.endedAt === undefined)) {
        seen = entry;
        last = Date.now();
      }
      if (Date.now() - last >= idleMs) {
        return `no request and no command came for ${durationText(idleMs)} (--idle-timeout)`;
      }
      return undefined;
    },
    release: unlist,
  };
}

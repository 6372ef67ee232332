import { readlinkSync } from 'node:fs';
import { LEAK_COOKIE_VAR } from '../internal/leak-cookie.js';
import { LEAK_ORIGIN_VAR } from '../internal/leak-registry.js';
import { isDeadState, listProc, readProcFile, readStat } from '../internal/proc.js';

/**
 * The scan of LK-01 on Linux: every live process whose environment carries
 * a cookie, read from /proc/<pid>/environ. A process keeps the env it was
 * started with whatever it does later, so one that left its process group
 * (`setsid`, a double fork) or was adopted by init is found all the same.
 * What cannot be read (another user's process, one that ended meanwhile)
 * is skipped.
 */

/** One link of a leaked process's parent chain. */
export interface ProcessLink {
  pid: number;
  /** Its argv from /proc/<pid>/cmdline; empty when it could not be read. */
  argv: string[];
}

/** A live process that carries the cookie. */
export interface LeakedProcess {
  pid: number;
  /** Start time in clock ticks since boot: with the pid, it names this one process. */
  start: number;
  argv: string[];
  /** Its working dir (readlink /proc/<pid>/cwd); undefined when it could not be read. */
  cwd: string | undefined;
  /** Parents, nearest first, up to the test process or init (included). */
  parents: ProcessLink[];
  /** The id of the shimkit object that started it or an ancestor (`SHIMKIT_LEAK_ORIGIN`), if named. */
  origin?: number;
}

/** Where the scan reads /proc; tests of edge cases pass their own. */
export interface ProcReader {
  list: () => string[] | undefined;
  read: (path: string) => string | null | undefined;
  readlink: (path: string) => string | undefined;
}

const defaultReader: ProcReader = {
  list: listProc,
  read: readProcFile,
  readlink: (path) => {
    try {
      return readlinkSync(path);
    } catch {
      return undefined;
    }
  },
};

const ORIGIN = new RegExp(`(?:^|\0)${LEAK_ORIGIN_VAR}=(\\d+)(?:\0|$)`);

/** Parents followed at most, should /proc show a loop. */
const MAX_PARENTS = 64;

/**
 * Where pid allocation stood at one moment: the last pid handed out
 * (/proc/loadavg), the forks since boot (/proc/stat `processes`, threads
 * included) and the largest pid (/proc/sys/kernel/pid_max).
 */
export interface PidMark {
  lastPid: number;
  forks: number;
  pidMax: number;
}

/** Forks short of a whole turn of the pid space that still leave a window exact. */
const WRAP_MARGIN = 1024;

/** Where pid allocation stands now; undefined where /proc does not say. */
export function pidMark(reader: ProcReader = defaultReader): PidMark | undefined {
  const loadavg = reader.read('/proc/loadavg');
  const stat = reader.read('/proc/stat');
  const max = reader.read('/proc/sys/kernel/pid_max');
  if (typeof loadavg !== 'string' || typeof stat !== 'string' || typeof max !== 'string') {
    return undefined;
  }
  const lastPid = Number(loadavg.trim().split(/\s+/)[4]);
  const forks = Number(/^processes (\d+)$/m.exec(stat)?.[1]);
  const pidMax = Number(max.trim());
  if (![lastPid, forks, pidMax].every((n) => Number.isSafeInteger(n) && n > 0)) return undefined;
  return { lastPid, forks, pidMax };
}

/**
 * Whether `pid` can have been handed out after `since` (as of `now`): Linux
 * gives pids in turn, wrapping at pid_max, so every process made since lies
 * in (since.lastPid, now.lastPid] — unless the pid space turned over whole
 * meanwhile, which the forks count tells (then every pid can be new).
 */
export function newSince(since: PidMark, now: PidMark): (pid: number) => boolean {
  if (now.forks - since.forks >= since.pidMax - WRAP_MARGIN || now.pidMax !== since.pidMax) {
    return () => true;
  }
  const from = since.lastPid;
  const to = now.lastPid;
  if (to === from) return () => now.forks !== since.forks;
  return to > from ? (pid) => pid > from && pid <= to : (pid) => pid > from || pid <= to;
}

/**
 * Every live process (not a zombie, not this process) whose environment
 * holds `SHIMKIT_LEAK_COOKIE=<cookie>`, by pid. Undefined where there is no
 * /proc (macOS, Windows: not scanned yet).
 */
export function findCookieProcesses(
  cookie: string,
  options: { self?: number; reader?: ProcReader; since?: PidMark } = {},
): LeakedProcess[] | undefined {
  const reader = options.reader ?? defaultReader;
  const self = options.self ?? process.pid;
  const entries = reader.list();
  if (entries === undefined) return undefined;
  // With a mark from when the cookie was set, only processes made since can
  // carry it (a process's environ is what it was started with): only their
  // environ is read, not every process's. Marked after the listing, so that
  // every pid listed was handed out by then.
  const now = options.since && pidMark(reader);
  const fresh = options.since && now ? newSince(options.since, now) : () => true;
  const needle = `\0${LEAK_COOKIE_VAR}=${cookie}\0`;
  return described(entries, { self, reader, fresh }, (environ) =>
    `\0${environ}`.includes(needle) ? {} : undefined,
  );
}

/**
 * Each live process listed in `entries` (not `self`, its pid `fresh`) whose
 * environ `pick` takes, with what `pick` returned; sorted by pid.
 */
function described<T extends object>(
  entries: readonly string[],
  options: { self: number; reader: ProcReader; fresh?: (pid: number) => boolean },
  pick: (environ: string) => T | undefined,
): Array<LeakedProcess & T> {
  const { self, reader, fresh = () => true } = options;
  const found: Array<LeakedProcess & T> = [];
  for (const entry of entries) {
    const first = entry.charCodeAt(0);
    if (first < 48 || first > 57) continue; // not a pid
    const pid = Number(entry);
    if (pid === self || !fresh(pid)) continue;
    const environ = reader.read(`/proc/${entry}/environ`);
    if (typeof environ !== 'string') continue;
    const extra = pick(environ);
    if (extra === undefined) continue;
    const stat = readStat(entry, reader.read);
    if (!stat || isDeadState(stat.state)) continue; // ended meanwhile, or ended and not yet reaped
    const origin = ORIGIN.exec(environ)?.[1];
    found.push({
      pid,
      start: stat.start,
      argv: readArgv(pid, reader),
      cwd: reader.readlink(`/proc/${entry}/cwd`),
      parents: parentChain(stat.ppid, self, reader),
      ...(origin === undefined ? {} : { origin: Number(origin) }),
      ...extra,
    });
  }
  return found.sort((a, b) => a.pid - b.pid);
}

/** A cookie's owner: `[cli-]<pid>-<start>-…`, the process that set it. */
const OWNER = new RegExp(`(?:^|\0)${LEAK_COOKIE_VAR}=(?:cli-)?(\\d+)-(\\d+)-[^\0]*`);

/** A live process carrying a cookie whose owner is gone. */
export interface OrphanedProcess extends LeakedProcess {
  /** The cookie it carries. */
  cookie: string;
}

/**
 * Every live process (not this one) carrying a cookie whose owner — the
 * test process or `shimkit leaks` that set it, named by the cookie's pid
 * and start time — is gone: what a test process that was SIGKILLed (an
 * out-of-memory kill, a runner's timeout) left behind, with no scope left
 * to find it. Reads every process's environ. Undefined without /proc.
 */
export function findOrphanedCookieProcesses(
  options: { self?: number; reader?: ProcReader } = {},
): OrphanedProcess[] | undefined {
  const reader = options.reader ?? defaultReader;
  const self = options.self ?? process.pid;
  const entries = reader.list();
  if (entries === undefined) return undefined;
  const ownerAlive = new Map<string, boolean>();
  return described(entries, { self, reader }, (environ) => {
    const match = OWNER.exec(environ);
    if (!match) return undefined;
    const [, ownerPid, ownerStart] = match;
    const key = `${ownerPid}-${ownerStart}`;
    let alive = ownerAlive.get(key);
    if (alive === undefined) {
      const owner = readStat(ownerPid as string, reader.read);
      alive = !!owner && owner.start === Number(ownerStart) && !isDeadState(owner.state);
      ownerAlive.set(key, alive);
    }
    return alive
      ? undefined
      : { cookie: match[0].replace(/^\0/, '').slice(LEAK_COOKIE_VAR.length + 1) };
  });
}

/** The argv of `pid` from /proc/<pid>/cmdline (NUL-separated). */
export function readArgv(pid: number, reader: ProcReader = defaultReader): string[] {
  const text = reader.read(`/proc/${pid}/cmdline`);
  if (typeof text !== 'string' || text === '') return [];
  const argv = text.split('\0');
  if (argv[argv.length - 1] === '') argv.pop();
  return argv.map((arg) => Buffer.from(arg, 'latin1').toString('utf8'));
}

function parentChain(ppid: number, self: number, reader: ProcReader): ProcessLink[] {
  const chain: ProcessLink[] = [];
  let pid = ppid;
  while (pid > 0 && chain.length < MAX_PARENTS) {
    chain.push({ pid, argv: readArgv(pid, reader) });
    if (pid === self || pid === 1) break;
    const stat = readStat(pid, reader.read);
    if (!stat) break;
    pid = stat.ppid;
  }
  return chain;
}

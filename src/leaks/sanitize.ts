import { appendFileSync, readFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import { describeValue } from '../internal/describe.js';
import { InvalidOptionError, ShimkitError } from '../internal/errors.js';
import { hostTmpdir, pinHostTmpdir, SCOPE_TMP_PREFIX } from '../internal/host-tmp.js';
import { isInfrastructureFd } from '../internal/infra-fds.js';
import { currentLeakCookie, LEAK_COOKIE_VAR, runWithLeakCookie } from '../internal/leak-cookie.js';
import {
  closeLeakScope,
  type LeakKind,
  openLeakScope,
  outerEndpoints,
  type Tracked,
  trackedIn,
} from '../internal/leak-registry.js';
import { realDelay, realNow, realTimeout } from '../internal/real-timers.js';
import { createTempDir, type TempDir } from '../internal/temp-dir.js';
import { describeFds, type FdTable, fdDiff, fdSnapshot, type OpenedFd } from './fds.js';
import { formatLeakedProcess, formatReport } from './format.js';
import {
  AllowList,
  defaultLeakMode,
  type LeakAllow,
  type LeakCategory,
  type LeakPolicy,
  type ResolvedPolicy,
  resolvePolicy,
} from './policy.js';
import { killAndReap } from './reap.js';
import { findCookieProcesses, type LeakedProcess, type PidMark, pidMark } from './scan.js';
import { newCookie, sweepOrphanedCookies } from './sweep.js';
import { type LeftEntry, leftIn, removeScopeTmp } from './tmp.js';
import { madeAt } from './where.js';

/**
 * The leak sanitizer (requirements LK-01…LK-07). A scope — one per test,
 * one per file for what `beforeAll` makes — sets a cookie in the
 * environment of everything shimkit starts and tracks the shimkit objects
 * made while it is open. Its `check()` settles what is already ending
 * (LK-04), then finds the processes that still carry the cookie and the
 * objects not disposed, reports them (with the parent chain and the test
 * line that made them), and cleans them up. `shimkit/vitest/sanitize` and
 * `shimkit/jest/sanitize` open and check the scopes for you.
 */

/** Who started a leaked process: the shimkit object, and where the test made it. */
export interface LeakOrigin {
  id: number;
  kind: LeakKind;
  name: string;
  /** `path:line` of the test code that made it. */
  madeAt: string | undefined;
}

/** A process left running, as reported. */
export interface ReportedProcess extends LeakedProcess {
  /** The shimkit object that started it (or the chain that led to it), when known. */
  startedBy: LeakOrigin | undefined;
  /** It was killed (or its object closed) in the test, but not awaited, and outlived the settle (LK-04). */
  killedNotAwaited: boolean;
  /**
   * What its own shimkit object (a `spawnProcess` process, a PTY session)
   * still held, a line each: its foreground process, output no wait read.
   */
  holds?: string[];
  /** The allow-list entry's reason, when one allowed it. */
  allowed?: string;
}

/** A shimkit object not disposed by the end of its scope. */
export interface LeakedObject extends LeakOrigin {
  /** Its creation stack, as the runner formats it (source-mapped). */
  stack: string | undefined;
  /** What it still held at the protocol level, a line each. */
  holds: string[];
  /** Its dispose was started but not awaited, and did not end within the settle. */
  killedNotAwaited: boolean;
  allowed?: string;
}

/** A descriptor left open. */
export interface LeakedFd extends OpenedFd {
  /** What it is: `unix socket /tmp/x.sock listening`, `PTY master (/dev/pts/3)`, a path … */
  description: string;
  allowed?: string;
}

/** Something left in the scope's TMPDIR. */
export interface LeftFile extends LeftEntry {
  allowed?: string;
}

/** What one `check()` found and did. */
export interface LeakReport {
  /** The scope's label (the test's name). */
  label: string;
  /** `test`, or `file` for what the file's `beforeAll`/fixtures made. */
  scope: LeakScopeKind;
  /** The cookie the processes were found by. */
  cookie: string;
  /** False where processes cannot be scanned (no /proc: macOS, Windows) or the category is off. */
  scanned: boolean;
  /** The processes that carried the cookie, as found (before they were killed). */
  processes: ReportedProcess[];
  /** The objects made in the scope and not disposed. */
  objects: LeakedObject[];
  /** Descriptors the test process opened in the scope and left open (LK-03), a line each; not closed. */
  fds: LeakedFd[];
  /** False where the fd table is not diffed: no /proc, tests running at the same time in this process, a worker thread. */
  fdsChecked: boolean;
  /** What was left in the scope's own TMPDIR (LK-03): top-level entries, then removed. */
  files: LeftFile[];
  /** The scope's TMPDIR while it was open; undefined when it had none. */
  tmpDir: string | undefined;
  /** Pids killed and gone. */
  killed: number[];
  /** Pids still there after the kill and `waitMs` (or that could not be signalled). */
  remaining: number[];
  /** The settle's limit (LK-04), and how long it waited for things already ending. */
  settleMs: number;
  settledMs: number;
  /** Categories with something not allowed: those in `fail` mode fail the test. */
  failed: LeakCategory[];
  warned: LeakCategory[];
  /** Time spent settling, scanning, killing and cleaning, in ms. */
  ms: number;
}

export type LeakScopeKind = 'test' | 'file';

/** Options of `sanitize.begin()`. */
export interface SanitizeOptions {
  /**
   * How long `check()` waits for killed processes to be gone.
   * @default 500
   */
  waitMs?: number;
  /**
   * How long `check()` waits for what is already ending — a process killed
   * but not awaited, a dispose not awaited — before judging it (LK-04).
   * @default 500
   */
  settleMs?: number;
  /** This scope's policy, over the one set with `sanitize.configure()`. */
  policy?: LeakPolicy;
  /** `file` for a file's `beforeAll` scope. @default 'test' */
  scope?: LeakScopeKind;
  /**
   * A test that runs while others do in this process (`test.concurrent`):
   * its cookie is not put in `process.env` (shared by them all) but given
   * through `scope.run(fn)` to what shimkit starts inside `fn`.
   */
  concurrent?: boolean;
  /** Diff the process's fd table over the scope (LK-03; Linux, one scope at a time). @default true */
  fds?: boolean;
  /** Give the scope its own `TMPDIR` (LK-03), removed at its end. @default true (not for concurrent scopes) */
  tmp?: boolean;
}

/** Scans after a kill, for processes forked between a scan and the kill. */
const MAX_ROUNDS = 3;
/** Poll step of the settle. */
const SETTLE_POLL_MS = 10;
/** How long one leaked object's dispose may take after the report. */
const DISPOSE_LIMIT_MS = 5000;

const open: LeakScope[] = [];
let configured: ResolvedPolicy | undefined;
/**
 * Descriptors a scope has reported (`<fd> <target>`), still open: an outer
 * scope (the file's, open around its tests) saw them opened too, but they
 * are the test's, already reported; it does not report them again.
 */
const reportedFds = new Set<string>();
/** An empty scope TMPDIR, kept for the next scope. */
let idleTmp: TempDir | undefined;

function basePolicy(): ResolvedPolicy {
  if (configured) return configured;
  const mode = defaultLeakMode();
  return { modes: { processes: mode, objects: mode, fds: mode, files: mode }, allow: [] };
}

/** One test's (or file's) sanitizer scope: from `sanitize.begin()` to `check()`. */
export class LeakScope {
  /** The label given to `begin()`. */
  readonly label: string;
  /** The value of `SHIMKIT_LEAK_COOKIE` in this scope. */
  readonly cookie: string;
  readonly kind: LeakScopeKind;
  readonly concurrent: boolean;
  readonly #waitMs: number;
  readonly #settleMs: number;
  #policy: ResolvedPolicy;
  readonly #previous: string | undefined;
  /** Where pid allocation stood when the cookie was set: the scan reads only processes made since. */
  readonly #since: PidMark | undefined;
  /** The fd table at the start; undefined when not diffed. */
  readonly #fdsBefore: FdTable | undefined;
  /** The scope's own TMPDIR, and what TMPDIR was before it. */
  readonly #tmp: { dir: string; temp: TempDir; previous: string | undefined } | undefined;
  #checked: Promise<LeakReport> | undefined;

  /** @internal Use `sanitize.begin()`. */
  constructor(
    label: string,
    options: Required<Omit<SanitizeOptions, 'policy'>> & { policy: ResolvedPolicy },
  ) {
    this.label = label;
    this.cookie = newCookie();
    this.kind = options.scope;
    this.concurrent = options.concurrent;
    this.#waitMs = options.waitMs;
    this.#settleMs = options.settleMs;
    this.#policy = options.policy;
    this.#previous = process.env[LEAK_COOKIE_VAR];
    this.#since = pidMark();
    openLeakScope(this.cookie);
    if (!this.concurrent) process.env[LEAK_COOKIE_VAR] = this.cookie;
    // The fd table is the process's: diffed only while this is the one scope running in it.
    const alone = !this.concurrent && isMainThread && !open.some((s) => s.concurrent);
    this.#fdsBefore =
      options.fds && alone && this.#policy.modes.fds !== 'off' ? fdSnapshot() : undefined;
    if (options.tmp && !this.concurrent && this.#policy.modes.files !== 'off') {
      const previous = process.env.TMPDIR;
      pinHostTmpdir();
      // In the host's temp dir, not in an outer scope's (paths stay short: a socket path has
      // 107 bytes), named after this process, so the leftover sweep removes it if the process is killed.
      const temp = idleTmp ?? createTempDir(SCOPE_TMP_PREFIX, hostTmpdir());
      idleTmp = undefined;
      process.env.TMPDIR = temp.path;
      this.#tmp = { dir: temp.path, temp, previous };
    }
  }

  /** Run `fn` (the test) with this scope's cookie, also when others run at the same time. */
  run<T>(fn: () => T): T {
    return runWithLeakCookie(this.cookie, fn);
  }

  /** Change this scope's policy (from inside the test: `sanitize.policy('warn')`). */
  setPolicy(policy: LeakPolicy): void {
    this.#policy = resolvePolicy(policy, this.#policy, 'sanitize.policy()');
  }

  /** The policy in force for this scope. */
  get policy(): ResolvedPolicy {
    return this.#policy;
  }

  /**
   * Settle (LK-04), then find every live process that carries this scope's
   * cookie (also those that left their group with `setsid` or a double
   * fork) and every object made in it and not disposed; report them,
   * dispose the objects, SIGKILL the processes and wait up to `waitMs` for
   * them to be gone; close the scope (the previous cookie, or none, is back
   * in `process.env`). A second call returns the first one's report.
   * @example
   * const leaks = sanitize.begin('deploys');
   * await run('deploy.sh', []);
   * const report = await leaks.check();
   * expect(report.processes).toEqual([]);
   */
  check(): Promise<LeakReport> {
    this.#checked ??= this.#check();
    return this.#checked;
  }

  async #check(): Promise<LeakReport> {
    const began = realNow();
    const modes = this.#policy.modes;
    const tracked = trackedIn(this.cookie);
    const byId = new Map(tracked.map((t) => [t.id, t]));
    const byPid = new Map<number, Tracked>();
    for (const t of tracked) for (const pid of t.subject.pids?.() ?? []) byPid.set(pid, t);

    // LK-04: what is already ending gets up to settleMs to end.
    const deadline = began + this.#settleMs;
    const ending = tracked.filter((t) => t.settling !== undefined && leftBehind(t));
    if (ending.length > 0) await settle(ending, deadline);

    let scanned = modes.processes !== 'off';
    let found: LeakedProcess[] = [];
    if (scanned) {
      const now = findCookieProcesses(this.cookie, { since: this.#since });
      if (now === undefined) scanned = false;
      else found = now;
      // A process signalled but not yet gone, or one whose object is closing: waited for too.
      while (found.some((p) => dying(p, byPid, byId)) && realNow() < deadline) {
        await realDelay(SETTLE_POLL_MS);
        found = findCookieProcesses(this.cookie, { since: this.#since }) ?? [];
      }
    }
    const settledMs = Math.max(0, Math.min(realNow(), deadline) - began);

    const allow = new AllowList(this.#policy.allow);
    const heldShown = new Set<Tracked>();
    const processes: ReportedProcess[] = found.map((p) => {
      const owner = ownerOf(p, byPid, byId);
      const reported: ReportedProcess = {
        ...p,
        startedBy: owner && originOf(owner),
        killedNotAwaited: owner?.settling !== undefined,
      };
      // A process object (spawnProcess, a PTY session) is shown as its process, not as an
      // object: what it holds goes with the first process it is the owner of.
      if (owner?.subject.alive && !heldShown.has(owner)) {
        heldShown.add(owner);
        const holds = holdsOf(owner, true);
        if (holds.length > 0) reported.holds = holds;
      }
      const allowed = allow.take('argv', p.argv.join(' '));
      if (allowed) reported.allowed = allowed.reason;
      return reported;
    });
    // A process object still running shows as its process (found by the scan); where
    // nothing is scanned (no /proc), as an object: the pid list of what shimkit started.
    // A process object shown as the owner of a leaked process is that report's "started by".
    const shownAsOwner = new Set(processes.map((p) => p.startedBy?.id));
    const reportedPids = new Set(found.map((p) => p.pid));
    const objects: LeakedObject[] =
      modes.objects === 'off'
        ? []
        : tracked
            .filter(
              (t) =>
                leftBehind(t) &&
                !(t.subject.alive && shownAsOwner.has(t.id)) &&
                !t.subject.pids?.().some((pid) => reportedPids.has(pid)),
            )
            .map((t) => {
              const object: LeakedObject = {
                ...originOf(t),
                stack: t.made.stack,
                holds: holdsOf(t),
                killedNotAwaited: t.settling !== undefined,
              };
              const allowed = allow.take('object', `${t.kind} ${t.name}`);
              if (allowed) object.allowed = allowed.reason;
              return object;
            });

    // Clean up: what is found never spills into the next test (LK-06). The processes go
    // first, so a process object's dispose finds its process gone (and waits on no timer).
    const leaked = tracked.filter(leftBehind);
    const killed = new Set<number>();
    let remaining: number[] = [];
    let fds: LeakedFd[] = [];
    let files: LeftFile[] = [];
    let tmpEmpty = false;
    try {
      let fresh = found;
      for (let round = 0; round < MAX_ROUNDS && fresh.length > 0; round += 1) {
        const reaped = await killAndReap(fresh, { waitMs: this.#waitMs });
        for (const pid of reaped.killed) killed.add(pid);
        remaining = reaped.remaining;
        const again = findCookieProcesses(this.cookie, { since: this.#since }) ?? [];
        fresh = again.filter((p) => !killed.has(p.pid) && !remaining.includes(p.pid));
      }
      // A process object whose process is gone now needs no dispose (its close may be
      // waiting on timers a test faked and left faked): its exit event comes on a next turn.
      const reaped = leaked.filter((t) => {
        const pids = t.subject.alive ? (t.subject.pids?.() ?? []) : [];
        return pids.length > 0 && pids.every((pid) => killed.has(pid));
      });
      const until = realNow() + this.#waitMs;
      while (reaped.some(leftBehind) && realNow() < until) await realDelay(1);
      await Promise.all(leaked.filter(leftBehind).map((t) => disposeQuietly(t)));
      // After the objects are disposed: their own descriptors and files are explained by them.
      fds = await this.#openedFds(deadline, allow);
      if (this.#tmp) {
        const left = leftIn(this.#tmp.dir);
        tmpEmpty = left.total === 0 && left.complete;
        files = left.entries.map((entry) => {
          const file: LeftFile = { ...entry };
          const allowed = allow.take('file', entry.path);
          if (allowed) file.allowed = allowed.reason;
          return file;
        });
      }
    } finally {
      this.#close(tmpEmpty);
    }

    const failed: LeakCategory[] = [];
    const warned: LeakCategory[] = [];
    const judge = (category: LeakCategory, things: { allowed?: string }[]) => {
      if (!things.some((t) => t.allowed === undefined)) return;
      if (modes[category] === 'fail') failed.push(category);
      else if (modes[category] === 'warn') warned.push(category);
    };
    judge('processes', processes);
    judge('objects', objects);
    judge('fds', fds);
    judge('files', files);
    const report: LeakReport = {
      label: this.label,
      scope: this.kind,
      cookie: this.cookie,
      scanned,
      processes,
      objects,
      fds,
      fdsChecked: this.#fdsBefore !== undefined,
      files,
      tmpDir: this.#tmp?.dir,
      killed: [...killed].sort((a, b) => a - b),
      remaining,
      settleMs: this.#settleMs,
      settledMs,
      failed,
      warned,
      ms: realNow() - began,
    };
    writeJsonReport(report);
    return report;
  }

  /** The fds opened in the scope and still open, after a settle for those closing now (LK-04). */
  async #openedFds(deadline: number, allow: AllowList): Promise<LeakedFd[]> {
    const before = this.#fdsBefore;
    if (before === undefined) return [];
    // A socket to a server or proxy an outer scope (the file's beforeAll) still holds is that object's.
    const outer = outerEndpoints(this.cookie);
    const owned = (text: string) =>
      outer.some((e) =>
        e.startsWith('tcp:')
          ? new RegExp(`:${e.slice(4)}(?!\\d)`).test(text)
          : e.startsWith('unix:') && text.includes(e.slice(5)),
      );
    const openNow = (): LeakedFd[] => {
      const opened = diffNow(before).filter((fd) => !reportedFds.has(fdKey(fd)));
      if (opened.length === 0) return [];
      const described = describeFds(opened);
      return opened
        .map((fd, i) => ({ ...fd, description: described[i] ?? fd.target }))
        .filter((fd) => !(fd.kind === 'socket' && owned(fd.description)));
    };
    let left = openNow();
    // One closing on the next tick gets a few polls even when the settle's time is spent.
    const until = Math.max(deadline, realNow() + 5 * SETTLE_POLL_MS);
    while (left.length > 0 && realNow() < until) {
      await realDelay(SETTLE_POLL_MS);
      left = openNow();
    }
    for (const fd of left) {
      reportedFds.add(fdKey(fd));
      const allowed = allow.take('fd', `${fd.kind} ${fd.description}`);
      if (allowed) fd.allowed = allowed.reason;
    }
    return left;
  }

  /** Close the scope; an empty TMPDIR is kept for the next scope (making one is most of a scope's cost). */
  #close(tmpEmpty = false): void {
    closeLeakScope(this.cookie);
    if (this.#tmp) {
      if (process.env.TMPDIR === this.#tmp.dir) {
        if (this.#tmp.previous === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = this.#tmp.previous;
      }
      if (tmpEmpty && idleTmp === undefined) idleTmp = this.#tmp.temp;
      else this.#removeTmp();
    }
    const at = open.indexOf(this);
    if (at === -1) return;
    open.splice(at, 1);
    if (this.concurrent) return;
    if (process.env[LEAK_COOKIE_VAR] !== this.cookie) return; // another scope's now
    if (this.#previous === undefined) delete process.env[LEAK_COOKIE_VAR];
    else process.env[LEAK_COOKIE_VAR] = this.#previous;
  }

  #removeTmp(): void {
    if (!this.#tmp) return;
    try {
      this.#tmp.temp.remove();
    } catch {
      try {
        removeScopeTmp(this.#tmp.dir); // a read-only dir in it, for a user other than root
      } catch {
        // what cannot go is in the report's files; the leftover sweep takes it later
      }
    }
  }

  /** `check()`, for `await using leaks = sanitize.begin(…)`; the report is dropped. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.check();
  }
}

/** Whether a tracked object is left behind: a process still running, anything else not disposed. */
function leftBehind(t: Tracked): boolean {
  return t.subject.alive ? t.subject.alive() : !t.disposed;
}

function originOf(t: Tracked): LeakOrigin {
  return { id: t.id, kind: t.kind, name: t.name, madeAt: madeAt(t.made.stack) };
}

function holdsOf(t: Tracked, onProcessLine = false): string[] {
  try {
    return t.subject.holds?.(onProcessLine) ?? [];
  } catch (error) {
    return [`could not read what it holds: ${(error as Error)?.message ?? String(error)}`];
  }
}

/** The tracked object a process was started by: a parent's pid, else the env's origin id. */
function ownerOf(
  p: LeakedProcess,
  byPid: ReadonlyMap<number, Tracked>,
  byId: ReadonlyMap<number, Tracked>,
): Tracked | undefined {
  const own = byPid.get(p.pid);
  if (own) return own;
  for (const link of p.parents) {
    const t = byPid.get(link.pid);
    if (t) return t;
  }
  return p.origin === undefined ? undefined : byId.get(p.origin);
}

/** A process that is ending: a fatal signal pending, or its object is closing. */
function dying(
  p: LeakedProcess,
  byPid: ReadonlyMap<number, Tracked>,
  byId: ReadonlyMap<number, Tracked>,
): boolean {
  return ownerOf(p, byPid, byId)?.settling !== undefined || fatalSignalPending(p.pid);
}

/** SIGKILL, SIGTERM, SIGINT or SIGHUP pending for `pid` (/proc/<pid>/status): it is about to end. */
function fatalSignalPending(pid: number): boolean {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'latin1');
  } catch {
    return false;
  }
  // Bits of signals 1 (HUP), 2 (INT), 9 (KILL), 15 (TERM), numbered from 1.
  const fatal = (1n << 0n) | (1n << 1n) | (1n << 8n) | (1n << 14n);
  for (const key of ['SigPnd', 'ShdPnd']) {
    const hex = new RegExp(`^${key}:\\s*([0-9a-f]+)$`, 'm').exec(status)?.[1];
    if (hex && (BigInt(`0x${hex}`) & fatal) !== 0n) return true;
  }
  return false;
}

async function settle(ending: readonly Tracked[], deadline: number): Promise<void> {
  const left = deadline - realNow();
  if (left <= 0) return;
  let timer: { clear(): void } | undefined;
  await Promise.race([
    Promise.allSettled(ending.map((t) => t.settling)),
    new Promise<void>((resolve) => {
      timer = realTimeout(resolve, left);
    }),
  ]);
  timer?.clear();
}

async function disposeQuietly(t: Tracked): Promise<void> {
  let timer: { clear(): void } | undefined;
  try {
    await Promise.race([
      Promise.resolve()
        .then(() => t.subject.dispose())
        .catch(() => {}),
      new Promise<void>((resolve) => {
        timer = realTimeout(resolve, DISPOSE_LIMIT_MS);
      }),
    ]);
  } finally {
    timer?.clear();
  }
}

function fdKey(fd: OpenedFd): string {
  return `${fd.fd} ${fd.target}`;
}

function diffNow(before: FdTable): OpenedFd[] {
  const after = fdSnapshot();
  return after === undefined ? [] : fdDiff(before, after).filter((o) => !isInfrastructureFd(o.fd));
}

/** `SHIMKIT_LEAKS_JSON=path`: a line of JSON per scope that found something (LK-07). */
function writeJsonReport(report: LeakReport): void {
  const path = process.env.SHIMKIT_LEAKS_JSON;
  const found =
    report.processes.length + report.objects.length + report.fds.length + report.files.length;
  if (!path || found === 0) return;
  const { cookie: _cookie, ...rest } = report;
  try {
    appendFileSync(path, `${JSON.stringify({ type: 'scope', pid: process.pid, ...rest })}\n`);
  } catch (error) {
    process.emitWarning(
      `shimkit could not write the leak report to SHIMKIT_LEAKS_JSON=${path}: ${(error as Error).message}`,
      { code: 'SHIMKIT_LEAKS_JSON' },
    );
  }
}

function checkMs(value: unknown, name: string): number {
  if (!Number.isInteger(value) || (value as number) < 0 || (value as number) > 60_000) {
    throw new InvalidOptionError(
      `Expected the \`${name}\` option of sanitize.begin() to be an integer number of ms from 0 to 60000, got ${describeValue(value)}.`,
    );
  }
  return value as number;
}

/** The open scope of the running test: the concurrent test's own, else the innermost. */
function currentScope(): LeakScope | undefined {
  const cookie = currentLeakCookie();
  return open.find((s) => s.cookie === cookie) ?? [...open].reverse().find((s) => !s.concurrent);
}

/**
 * The leak sanitizer (LK-01…LK-07).
 * @example
 * const leaks = sanitize.begin('my test');
 * // … start programs with spawnProcess, run, a sandbox, mock binaries …
 * const report = await leaks.check();
 * if (report.failed.length + report.warned.length > 0) console.warn(sanitize.format(report));
 */
export const sanitize = {
  /** Open a scope: a new cookie for what shimkit starts, until its `check()`. */
  begin(label: string, options: SanitizeOptions = {}): LeakScope {
    if (typeof label !== 'string') {
      throw new InvalidOptionError(
        `Expected the label of sanitize.begin() to be a string (the test's name), got ${describeValue(label)}.`,
      );
    }
    const scope = options.scope ?? 'test';
    if (scope !== 'test' && scope !== 'file') {
      throw new InvalidOptionError(
        `Expected the \`scope\` option of sanitize.begin() to be 'test' or 'file', got ${describeValue(scope)}.`,
      );
    }
    if (!orphansSwept) {
      orphansSwept = true;
      void sweepOrphans();
    }
    const made = new LeakScope(label, {
      waitMs: checkMs(options.waitMs ?? 500, 'waitMs'),
      settleMs: checkMs(options.settleMs ?? 500, 'settleMs'),
      policy: resolvePolicy(options.policy, basePolicy(), 'sanitize.begin()'),
      scope,
      concurrent: options.concurrent === true,
      fds: options.fds ?? true,
      tmp: options.tmp ?? true,
    });
    open.push(made);
    return made;
  },

  /** `check()` of the running test's scope. */
  check(): Promise<LeakReport> {
    const scope = currentScope();
    if (scope === undefined) return Promise.reject(noScope('sanitize.check()'));
    return scope.check();
  },

  /**
   * The policy of every scope opened from now on (LK-06): a mode, or modes
   * per category with an allow-list. Without it: `fail` under `CI=true`,
   * `warn` elsewhere (`SHIMKIT_LEAKS=fail|warn|off` overrides).
   * @example sanitize.configure({ mode: 'fail', allow: [{ argv: 'ssh-agent', reason: 'one per run, on purpose' }] })
   */
  configure(policy: LeakPolicy | undefined): void {
    configured = undefined;
    configured =
      policy === undefined
        ? undefined
        : resolvePolicy(policy, basePolicy(), 'sanitize.configure()');
  },

  /**
   * The running test's policy, from inside it: `sanitize.policy('warn')`,
   * or an allow-list for what this test leaves on purpose.
   */
  policy(policy: LeakPolicy): void {
    const scope = currentScope();
    if (scope === undefined) throw noScope('sanitize.policy()');
    scope.setPolicy(policy);
  },

  /** A readable block: what was left, a line each, with who started it; '' when nothing was. */
  format(report: LeakReport): string {
    return formatReport(report);
  },
};

let orphansSwept = false;

/**
 * Once per process, at its first scope: what test processes that died
 * without a check left carrying their cookies (a SIGKILLed worker) is
 * killed, with a warning naming each (LK-01, LK-06).
 */
async function sweepOrphans(): Promise<void> {
  try {
    const swept = await sweepOrphanedCookies({ waitMs: 500 });
    if (swept.processes.length === 0) return;
    const lines = swept.processes.map((p) => `  ${formatLeakedProcess(p)}  (cookie ${p.cookie})`);
    process.emitWarning(
      `shimkit leak sanitizer: killed ${swept.processes.length === 1 ? '1 process' : `${swept.processes.length} processes`} a test process that is gone left behind (it died before its check: SIGKILL, out of memory, a runner's timeout):\n${lines.join('\n')}`,
      { code: 'SHIMKIT_LEAKS_ORPHANS' },
    );
  } catch {
    // Best effort: the tests' own scopes still judge what they start.
  }
}

function noScope(what: string): ShimkitError {
  return new ShimkitError(
    'ERR_SHIMKIT_NO_LEAK_SCOPE',
    `${what} found no open scope: call sanitize.begin(label) when the test starts (or use the setup file 'shimkit/vitest/sanitize' or 'shimkit/jest/sanitize'), and check() once at its end.`,
  );
}

export type { LeakAllow, LeakCategory, LeakPolicy };

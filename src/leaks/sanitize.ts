import { describeValue } from '../internal/describe.js';
import { InvalidOptionError, ShimkitError } from '../internal/errors.js';
import { LEAK_COOKIE_VAR } from '../internal/leak-cookie.js';
import { readStat } from '../internal/proc.js';
import { formatLeakedProcess } from './format.js';
import { killAndReap } from './reap.js';
import { findCookieProcesses, type LeakedProcess, type PidMark, pidMark } from './scan.js';

/**
 * The leak sanitizer's scope (LK-01, first slice: processes, on Linux). A
 * scope sets a per-test cookie in `process.env` while it is open; shimkit
 * adds it to every env it builds for a child. `check()` finds the processes
 * that still carry it, kills and reaps them, and closes the scope.
 */

/** What one `check()` found and did. */
export interface LeakReport {
  /** The scope's label (the test's name). */
  label: string;
  /** The cookie the processes were found by. */
  cookie: string;
  /** False where processes cannot be scanned yet (no /proc: macOS, Windows); then nothing is found. */
  scanned: boolean;
  /** The processes that carried the cookie, as found (before they were killed). */
  processes: LeakedProcess[];
  /** Pids killed and gone. */
  killed: number[];
  /** Pids still there after the kill and `waitMs` (or that could not be signalled). */
  remaining: number[];
  /** Time spent scanning, killing and reaping, in ms. */
  ms: number;
}

/** Options of `sanitize.begin()`. */
export interface SanitizeOptions {
  /**
   * How long `check()` waits for killed processes to be gone.
   * @default 500
   * @example sanitize.begin('deploys', { waitMs: 2000 })
   */
  waitMs?: number;
}

/** Scans after a kill, for processes forked between a scan and the kill. */
const MAX_ROUNDS = 3;

let made = 0;
let cookiePrefix: string | undefined;
const open: LeakScope[] = [];

/** A cookie unique to this test: `<pid>-<start time>-<n>`. */
function newCookie(): string {
  cookiePrefix ??= `${process.pid}-${readStat(process.pid)?.start ?? Date.now()}`;
  made += 1;
  return `${cookiePrefix}-${made}`;
}

/** One test's sanitizer scope: from `sanitize.begin()` to `check()`. */
export class LeakScope {
  /** The label given to `begin()`. */
  readonly label: string;
  /** The value of `SHIMKIT_LEAK_COOKIE` in this scope. */
  readonly cookie: string;
  readonly #waitMs: number;
  readonly #previous: string | undefined;
  /** Where pid allocation stood when the cookie was set: the scan reads only processes made since. */
  readonly #since: PidMark | undefined;
  #checked: Promise<LeakReport> | undefined;

  /** @internal Use `sanitize.begin()`. */
  constructor(label: string, waitMs: number) {
    this.label = label;
    this.cookie = newCookie();
    this.#waitMs = waitMs;
    this.#previous = process.env[LEAK_COOKIE_VAR];
    this.#since = pidMark();
    process.env[LEAK_COOKIE_VAR] = this.cookie;
  }

  /**
   * Find every live process that carries this scope's cookie (also those
   * that left their group with `setsid` or a double fork), SIGKILL them,
   * wait up to `waitMs` for them to be gone, and close the scope (the
   * previous cookie, or none, is back in `process.env`). A second call
   * returns the first one's report.
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
    const began = performance.now();
    const found = new Map<number, LeakedProcess>();
    const killed = new Set<number>();
    let remaining: number[] = [];
    let scanned = true;
    try {
      for (let round = 0; round < MAX_ROUNDS; round += 1) {
        const now = findCookieProcesses(this.cookie, { since: this.#since });
        if (now === undefined) {
          scanned = false;
          break;
        }
        const fresh = now.filter((p) => found.get(p.pid)?.start !== p.start);
        if (fresh.length === 0) break;
        for (const p of fresh) found.set(p.pid, p);
        const reaped = await killAndReap(fresh, { waitMs: this.#waitMs });
        for (const pid of reaped.killed) killed.add(pid);
        remaining = reaped.remaining;
      }
    } finally {
      this.#close();
    }
    return {
      label: this.label,
      cookie: this.cookie,
      scanned,
      processes: [...found.values()].sort((a, b) => a.pid - b.pid),
      killed: [...killed].sort((a, b) => a - b),
      remaining,
      ms: performance.now() - began,
    };
  }

  #close(): void {
    const at = open.indexOf(this);
    if (at === -1) return;
    open.splice(at, 1);
    if (process.env[LEAK_COOKIE_VAR] !== this.cookie) return; // another scope's now
    if (this.#previous === undefined) delete process.env[LEAK_COOKIE_VAR];
    else process.env[LEAK_COOKIE_VAR] = this.#previous;
  }

  /** `check()`, for `await using leaks = sanitize.begin(…)`; the report is dropped. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.check();
  }
}

/**
 * The leak sanitizer (LK-01: processes, on Linux; the rest of LK is planned).
 * @example
 * const leaks = sanitize.begin('my test');
 * // … start programs with spawnProcess, run, a sandbox, mock binaries …
 * const report = await leaks.check();
 * if (report.processes.length > 0) console.warn(sanitize.format(report));
 */
export const sanitize = {
  /** Open a scope: a new cookie in `process.env` until its `check()`. */
  begin(label: string, options: SanitizeOptions = {}): LeakScope {
    if (typeof label !== 'string') {
      throw new InvalidOptionError(
        `Expected the label of sanitize.begin() to be a string (the test's name), got ${describeValue(label)}.`,
      );
    }
    const waitMs = options.waitMs ?? 500;
    if (!Number.isInteger(waitMs) || waitMs < 0 || waitMs > 60_000) {
      throw new InvalidOptionError(
        `Expected the \`waitMs\` option of sanitize.begin() to be an integer number of ms from 0 to 60000, got ${describeValue(waitMs)}.`,
      );
    }
    const scope = new LeakScope(label, waitMs);
    open.push(scope);
    return scope;
  },

  /** `check()` of the innermost open scope (the current test's). */
  check(): Promise<LeakReport> {
    const scope = open[open.length - 1];
    if (scope === undefined) {
      return Promise.reject(
        new ShimkitError(
          'ERR_SHIMKIT_NO_LEAK_SCOPE',
          'sanitize.check() found no open scope: call sanitize.begin(label) when the test starts, and check() once at its end.',
        ),
      );
    }
    return scope.check();
  },

  /** A readable block: a line per leaked process with its parent chain, or nothing when none. */
  format(report: LeakReport): string {
    if (report.processes.length === 0) return '';
    const lines = report.processes.map((p) => `  ${formatLeakedProcess(p)}`);
    const left =
      report.remaining.length > 0
        ? `\n  still running after SIGKILL: ${report.remaining.map((pid) => `pid ${pid}`).join(', ')}`
        : '';
    return `${report.label}: ${report.processes.length} process${report.processes.length === 1 ? '' : 'es'} left behind (killed):\n${lines.join('\n')}${left}`;
  },
};

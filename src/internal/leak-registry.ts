import { currentLeakCookie } from './leak-cookie.js';

/**
 * The leak sanitizer's record of the shimkit objects made in a scope
 * (requirement LK-02). An object made while a scope is open is tracked
 * under that scope's cookie, with a stack taken when it was made (V8 keeps
 * the frames; the text, source-mapped by the runner, is made only when a
 * report prints it). Its `dispose()`/`close()` marks it disposed. At the
 * scope's end the sanitizer reports what is not, with what it still holds,
 * then disposes it. An object made outside every scope (before the first
 * test: a baseline) is not tracked at all, so it is never blamed and costs
 * nothing.
 */

/** What kind of thing a tracked object is, as reports name it. */
export type LeakKind =
  | 'mock binary'
  | 'mock bin dir'
  | 'sandbox'
  | 'process'
  | 'PTY session'
  | 'frame proxy'
  | 'mock server';

/**
 * What an object tells the sanitizer about itself. `holds()` says what it
 * still holds at the protocol level (live calls, held requests, open
 * connections, unread SSE bytes, queued frames, a PTY's foreground
 * process), a line each; `dispose()` ends it after the report.
 */
export interface LeakSubject {
  /** `onProcessLine`: it is shown as its process (found by the scan), so that it runs goes unsaid. */
  holds?: (onProcessLine?: boolean) => string[];
  /**
   * For a process: whether it still runs. Then that alone says whether it
   * is left behind, disposed or not (a `close()` not awaited is a settle).
   */
  alive?: () => boolean;
  dispose: () => unknown;
  /**
   * Where it listens or connects (`tcp:<port>`, `unix:<path>`): a socket of
   * the test process to one of them is this object's, not the leak of a
   * test that ran while it was open in an outer scope (a `beforeAll` server).
   */
  endpoints?: () => readonly string[];
  /** Pids of processes it started itself, to name it in a leaked process's parent chain. */
  pids?: () => readonly number[];
}

/** One tracked object. */
export interface Tracked {
  readonly id: number;
  kind: LeakKind;
  /** Its name: the mock's command, the server's URL, the process's command line … */
  name: string;
  readonly cookie: string;
  /** Holds the stack of where it was made, formatted only when read. */
  readonly made: { stack?: string };
  readonly subject: LeakSubject;
  /** `dispose()`/`close()` was called (maybe not awaited: `settling` then holds its promise). */
  disposed: boolean;
  /** A kill or dispose that was started and not awaited, for the settle (LK-04). */
  settling?: Promise<unknown>;
}

/** Frames kept per object: enough to get past shimkit's own and the runner's. */
const STACK_FRAMES = 12;

const scopes = new Map<string, Tracked[]>();
let made = 0;

/** @internal The sanitizer opens a scope for `cookie`: objects made under it are tracked. */
export function openLeakScope(cookie: string): void {
  if (!scopes.has(cookie)) scopes.set(cookie, []);
}

/** @internal The sanitizer closes it: what was tracked under `cookie`, now forgotten here. */
export function closeLeakScope(cookie: string): Tracked[] {
  const tracked = scopes.get(cookie) ?? [];
  scopes.delete(cookie);
  return tracked;
}

/** @internal What is tracked under `cookie` so far (the scope stays open). */
export function trackedIn(cookie: string): readonly Tracked[] {
  return scopes.get(cookie) ?? [];
}

/** The env var that names the tracked object a process was started by (its id), for one whose parents are gone. */
export const LEAK_ORIGIN_VAR = 'SHIMKIT_LEAK_ORIGIN';

/**
 * An id for an object about to be made, to put in its child's env as
 * `SHIMKIT_LEAK_ORIGIN` before `trackLeak(…, id)`; undefined when no scope
 * is open.
 */
export function reserveLeakId(): number | undefined {
  if (scopes.size === 0) return undefined;
  const cookie = currentLeakCookie();
  if (cookie === undefined || !scopes.has(cookie)) return undefined;
  made += 1;
  return made;
}

/**
 * Track `subject` under the current scope's cookie; undefined (and nothing
 * kept) when no scope is open. Call it in the object's constructor, and
 * `untrackLeak()` from its dispose.
 */
export function trackLeak(
  kind: LeakKind,
  name: string,
  subject: LeakSubject,
  id?: number,
): Tracked | undefined {
  if (scopes.size === 0) return undefined;
  const cookie = currentLeakCookie();
  const list = cookie === undefined ? undefined : scopes.get(cookie);
  if (list === undefined || cookie === undefined) return undefined;
  const holder: { stack?: string } = {};
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = STACK_FRAMES;
  Error.captureStackTrace(holder, trackLeak);
  Error.stackTraceLimit = limit;
  if (id === undefined) made += 1;
  const tracked: Tracked = {
    id: id ?? made,
    kind,
    name,
    cookie,
    made: holder,
    subject,
    disposed: false,
  };
  list.push(tracked);
  return tracked;
}

/** Mark it disposed; `settling` is the dispose's promise when it is one (awaited by the settle). */
export function untrackLeak(tracked: Tracked | undefined, settling?: Promise<unknown>): void {
  if (tracked === undefined) return;
  tracked.disposed = true;
  if (settling !== undefined) tracked.settling = settling;
}

/** The endpoints of the live objects of every open scope but `cookie`'s. */
export function outerEndpoints(cookie: string): string[] {
  const found: string[] = [];
  for (const [other, list] of scopes) {
    if (other === cookie) continue;
    for (const t of list)
      if (!t.disposed && t.subject.endpoints) found.push(...t.subject.endpoints());
  }
  return found;
}

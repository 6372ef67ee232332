import { linkSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tempPathFor, tryUnlink } from './atomic.js';
import { errnoCode, ProtocolError } from './errors.js';
import { isAlive } from './process-alive.js';
import { sleepSync } from './sleep.js';

/**
 * The queue lock: a file holding its owner's pid, created with link(2) from a
 * temp file that already holds the pid, so the lock is never seen without its
 * owner. It only orders callers and keeps contention low; exactly-once rests
 * on the claim markers (see docs/decisions/001-queue-lock.md).
 */
export interface LockOptions {
  /** Give up (throw `LockTimeoutError`) after this epoch-ms time. */
  deadline: number;
  /** A lock older than this is taken over even if its owner looks alive (pid reuse, a stopped process). */
  maxHoldMs?: number;
  /** A lock file whose content cannot be read is taken over once it is this old. */
  unreadableGraceMs?: number;
}

export class LockTimeoutError extends Error {
  readonly holder: number | undefined;
  constructor(path: string, holder: number | undefined, waitedMs: number) {
    super(
      `gave up waiting for the queue lock after ${waitedMs} ms; it is held by ${
        holder === undefined ? 'an unknown process' : `live pid ${holder}`
      }: ${path}`,
    );
    this.name = 'LockTimeoutError';
    this.holder = holder;
  }
}

export interface HeldLock {
  readonly path: string;
  readonly token: string;
}

const DEFAULT_MAX_HOLD_MS = 10_000;
const DEFAULT_UNREADABLE_GRACE_MS = 500;
const MAX_BACKOFF_MS = 8;

export function acquireLock(path: string, options: LockOptions): HeldLock {
  const token = `${process.pid}\n`;
  const temp = tempPathFor(path);
  try {
    writeFileSync(temp, token, { mode: 0o600 });
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') throw vanished(path, error);
    throw error;
  }
  try {
    const start = Date.now();
    let backoff = 1;
    for (;;) {
      try {
        linkSync(temp, path);
        return { path, token };
      } catch (error) {
        const code = errnoCode(error);
        if (code === 'ENOENT') throw vanished(path, error);
        if (code !== 'EEXIST') throw error;
      }
      const holder = inspect(path, options);
      if (holder.stale) {
        breakStale(path, holder.pid);
        continue;
      }
      if (Date.now() > options.deadline)
        throw new LockTimeoutError(path, holder.pid, Date.now() - start);
      // Randomised, growing back-off: callers that collided do not retry in step.
      sleepSync(Math.random() * backoff);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  } finally {
    tryUnlink(temp);
  }
}

/** Release the lock if it is still ours (a lock taken over from us is left to its new owner). */
export function releaseLock(lock: HeldLock): void {
  try {
    if (readFileSync(lock.path, 'utf8') === lock.token) unlinkSync(lock.path);
  } catch {
    // Gone already (taken over, or the generation was reset).
  }
}

interface Holder {
  pid: number | undefined;
  stale: boolean;
}

function inspect(path: string, options: LockOptions): Holder {
  let ageMs: number;
  try {
    ageMs = Date.now() - statSync(path).mtimeMs;
  } catch {
    return { pid: undefined, stale: false }; // Released meanwhile: retry at once.
  }
  let content = '';
  try {
    content = readFileSync(path, 'utf8');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return { pid: undefined, stale: false };
    // Unreadable (permissions, I/O): judged by its age below, never fatal.
  }
  const pid = /^[1-9][0-9]*\n$/.test(content) ? Number(content) : undefined;
  if (pid === undefined) {
    return { pid, stale: ageMs > (options.unreadableGraceMs ?? DEFAULT_UNREADABLE_GRACE_MS) };
  }
  return { pid, stale: !isAlive(pid) || ageMs > (options.maxHoldMs ?? DEFAULT_MAX_HOLD_MS) };
}

/**
 * Take a stale lock out of the way. Renaming (not unlinking) means only one
 * waiter wins the file; the winner then checks that what it moved is really
 * the stale lock it judged, and puts back a live owner's lock it moved by
 * mistake (another waiter may have replaced the stale lock in between).
 */
function breakStale(path: string, judgedPid: number | undefined): void {
  const moved = `${path}.stale.${process.pid}.${Math.random().toString(36).slice(2)}`;
  try {
    renameSync(path, moved);
  } catch {
    return; // Someone else moved or released it.
  }
  try {
    const content = readFileSync(moved, 'utf8');
    const pid = /^[1-9][0-9]*\n$/.test(content) ? Number(content) : undefined;
    if (pid !== judgedPid && pid !== undefined && isAlive(pid)) {
      try {
        linkSync(moved, path);
      } catch {
        // The lock was taken meanwhile; the claim markers keep us correct.
      }
    }
  } catch {
    // Unreadable: it was stale.
  } finally {
    tryUnlink(moved);
  }
}

function vanished(path: string, cause: unknown): ProtocolError {
  return new ProtocolError(
    'the mock was reset or disposed while this call was waiting for its queue',
    path,
    { cause },
  );
}

import { randomBytes } from 'node:crypto';
import { linkSync, lstatSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { threadId } from 'node:worker_threads';
import { ShimkitError } from '../internal/errors.js';
import { linkExclusive, tryUnlink } from './atomic.js';
import { errnoCode } from './errors.js';
import { isAlive } from './process-alive.js';
import { sleepSync } from './sleep.js';

/**
 * One writer at a time per state dir (see docs/decisions/007-writer-lock.md).
 * Appends number the `sh/<n>` fragments by counting the queue first, so two
 * processes appending at once (two `shimkit enqueue`s) would both count the
 * same lines. Calls never take this lock: it orders writers only.
 *
 * The lock is a sequence of turns in `<state>/writers/`: turn `n` is the file
 * `<n>`, a hard link of an empty owner file whose name says who holds it
 * (`.owner.<pid>.<startedAt>.<thread>.<random>`, made once per process and
 * state dir), so a turn is never seen without its owner; `<n>.done`, one more
 * link of the same file, ends the turn. A writer takes turn `top + 1` once turn `top` is done or its
 * owner is dead; `link(2)` gives each turn to one writer at most, so a dead
 * holder is passed over without anyone ever taking a lock away from a live one.
 * Each new holder deletes turns older than its predecessor, so the dir stays a
 * few files; a writer whose view was that stale finds a later turn after its
 * link and gives its own up.
 */

/** How long a writer waits for a live holder before it gives up with a `ShimkitError`. */
export const WRITER_WAIT_MS = 10_000;

/** The steps a writer may be stopped at by the test hook (see {@link writerStop}). */
export type WriterStep = 'locked' | 'fragments' | 'appended' | 'settled';

const TURN = /^[1-9][0-9]{0,15}$/;
const DONE = /^([1-9][0-9]{0,15})\.done$/;
const OWNER = /^\.owner\.(\d+)\.(\d+)\.(\d+)\.[0-9a-f]+$/;
const self = () => ({
  pid: process.pid,
  startedAt: Math.floor(Date.now() - process.uptime() * 1000),
  thread: threadId,
});

/** Make the dir of the turns (when the state dir is made, while there is room for a dir). */
export function makeWriterDir(stateDir: string): void {
  mkdirSync(`${stateDir}/writers`, { mode: 0o700 });
}

/** Run `fn` holding the writer lock of `stateDir`. */
export function withWriterLock<T>(stateDir: string, fn: () => T, waitMs = WRITER_WAIT_MS): T {
  const dir = `${stateDir}/writers`;
  const turn = acquire(dir, waitMs);
  try {
    return fn();
  } finally {
    release(dir, turn);
  }
}

interface Turn {
  n: number;
  owner: string;
}

function acquire(dir: string, waitMs: number): Turn {
  const deadline = Date.now() + waitMs;
  let pause = 1;
  for (;;) {
    const view = scan(dir);
    const { top } = view;
    const holder = top === 0 || view.done.has(top) ? undefined : holderOf(dir, top, view.owners);
    if (holder === undefined || !holderLives(holder)) {
      const next = top + 1;
      const owner = take(dir, next);
      if (owner !== undefined) {
        let after: View;
        try {
          after = scan(dir);
        } catch (error) {
          tryUnlink(`${dir}/${next}`); // never leave a turn taken by a writer that gave up
          throw error;
        }
        if (after.top === next) {
          tidy(dir, top, after);
          return { n: next, owner };
        }
        // A later turn exists: this view was stale (its turn number was tidied away meanwhile).
        tryUnlink(`${dir}/${next}`);
      }
      continue; // someone else took it: look again at once
    }
    if (pause === 1) writerWaits(holder.pid);
    if (Date.now() >= deadline) {
      throw new ShimkitError(
        'ERR_SHIMKIT_WRITER_BUSY',
        `Another process (pid ${holder.pid}) has been appending to this mock for over ${waitMs} ms and has not finished: ${dir}. Is it stopped (SIGSTOP, a debugger)? Let it go on or kill it; a dead holder is passed over at once.`,
      );
    }
    sleepSync(pause);
    pause = Math.min(pause * 2, 20);
  }
}

function release(dir: string, turn: Turn): void {
  try {
    // `<n>.done` as one more link of the owner file: a name, not a new inode.
    linkSync(`${dir}/${turn.n}`, `${dir}/${turn.n}.done`);
  } catch {
    try {
      writeFileSync(`${dir}/${turn.n}.done`, '', { flag: 'wx', mode: 0o600 });
    } catch {
      // A turn left open is passed over once this process is gone; this
      // process passes over its own turns (it holds none while it waits).
    }
  }
}

/** The new holder of turn `top + 1` removes turns before `top`, and the owner files of dead writers. */
function tidy(dir: string, top: number, view: View): void {
  for (const n of view.turns) if (n < top) tryUnlink(`${dir}/${n}`);
  for (const n of view.done) if (n < top) tryUnlink(`${dir}/${n}.done`);
  for (const [name, owner] of view.owners) {
    if (owner.pid !== process.pid && !isAlive(owner.pid, owner.startedAt))
      tryUnlink(`${dir}/${name}`);
  }
}

interface View {
  top: number;
  turns: number[];
  done: Set<number>;
  /** Owner files by name. */
  owners: Map<string, Owner>;
}

/** The turns, which of them are done, and the owner files. */
function scan(dir: string): View {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    if (errnoCode(error) !== 'ENOENT') throw error;
    try {
      mkdirSync(dir, { mode: 0o700 }); // not recursive: a state dir that went away stays gone
    } catch (made) {
      if (errnoCode(made) !== 'EEXIST') throw made;
    }
    names = [];
  }
  const view: View = { top: 0, turns: [], done: new Set(), owners: new Map() };
  for (const name of names) {
    if (TURN.test(name)) {
      const n = Number(name);
      view.turns.push(n);
      if (n > view.top) view.top = n;
      continue;
    }
    const done = DONE.exec(name);
    if (done) {
      view.done.add(Number(done[1]));
      continue;
    }
    const owner = OWNER.exec(name);
    if (owner) {
      view.owners.set(name, {
        pid: Number(owner[1]),
        startedAt: Number(owner[2]),
        thread: Number(owner[3]),
      });
    }
  }
  return view;
}

/**
 * This thread's owner file in `dir`: an empty file whose name says who writes
 * (`.owner.<pid>.<startedAt>.<thread>.<random>`), made once and kept for the
 * turns to come (a new file per turn cost an inode, up to a millisecond on
 * ext4, on every `enqueue()`). Gone with the state dir, or tidied by a later
 * holder once this process is dead.
 */
const owners = new Map<string, string>();

function ownerFile(dir: string, fresh: boolean): string {
  let owner = owners.get(dir);
  if (owner && !fresh) return owner;
  const me = self();
  owner = `.owner.${me.pid}.${me.startedAt}.${me.thread}.${randomBytes(4).toString('hex')}`;
  writeFileSync(`${dir}/${owner}`, '', { flag: 'wx', mode: 0o600 });
  if (owners.size >= 512) owners.clear(); // one per state dir written; keep the map small
  owners.set(dir, owner);
  return owner;
}

/**
 * Take turn `n`: the owner file hard-linked as `<n>`, so a turn is never seen
 * without its owner and needs no data block (a full disk can still take
 * turns). The owner file's name, or undefined if the turn is taken.
 */
function take(dir: string, n: number): string | undefined {
  let owner = ownerFile(dir, false);
  try {
    return linkExclusive(`${dir}/${owner}`, `${dir}/${n}`) ? owner : undefined;
  } catch (error) {
    if (errnoCode(error) !== 'ENOENT') throw error;
    owner = ownerFile(dir, true); // the owner file went (a reset, a tidy): make another
    return linkExclusive(`${dir}/${owner}`, `${dir}/${n}`) ? owner : undefined;
  }
}

interface Owner {
  pid: number;
  startedAt: number;
  thread: number;
}

/**
 * Who holds turn `n`: the owner file that is the same file. None (the turn
 * is over) when the turn is gone, or its owner file was removed, which only
 * its owner's release or, once it is dead, a later holder does.
 */
function holderOf(dir: string, n: number, owners: Map<string, Owner>): Owner | undefined {
  let ino: number;
  try {
    ino = lstatSync(`${dir}/${n}`).ino;
  } catch {
    return undefined;
  }
  for (const [name, owner] of owners) {
    try {
      if (lstatSync(`${dir}/${name}`).ino === ino) return owner;
    } catch {}
  }
  return undefined;
}

/** Whether the holder still writes: alive, and not this very thread (whose turn a failed release left open). */
function holderLives(owner: Owner): boolean {
  if (owner.pid === process.pid) return owner.thread !== threadId;
  return isAlive(owner.pid, owner.startedAt);
}

/**
 * Test hook: `SHIMKIT_TEST_WRITER_STOP=<step>` stops the writing process
 * with SIGSTOP at that step, so a test can kill it there.
 */
export function writerStop(step: WriterStep): void {
  if (process.env.SHIMKIT_TEST_WRITER_STOP === step) process.kill(process.pid, 'SIGSTOP');
}

/** Test hook: `SHIMKIT_TEST_WRITER_WAITING=<file>` writes the holder's pid there when this writer starts to wait. */
function writerWaits(holder: number): void {
  const file = process.env.SHIMKIT_TEST_WRITER_WAITING;
  if (file) writeFileSync(file, String(holder), { mode: 0o600 });
}

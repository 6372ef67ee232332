import { linkSync, lstatSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ShimkitError } from 'shimkit';
import { shQuote } from '../words.js';
import { isAlive } from './dir.js';

/**
 * The exclusive claim of a `shimkit serve` on its dir (HT-10): the file
 * `D/server.lock` ({"pid","startedAt"}), made by hard-linking a finished
 * temp file into place, so it exists whole or not at all and `link(2)`
 * succeeds for one process only. Two servers started at once on one dir:
 * the one whose link succeeds serves, the other exits 3 before it listens.
 *
 * A lock whose pid no longer runs (a server that was SIGKILLed) is stale: it
 * is renamed aside (one process's rename succeeds) and removed if it is the
 * one judged stale; if it is not (another starter broke the stale one and
 * claimed first), it is linked back. The claim is held while the server
 * runs; the server checks every 500 ms that `server.lock` is still its own
 * (the same inode) and stops if it is not, so a server can never run on
 * unseen after losing its dir.
 */

export const SERVER_LOCK = 'server.lock';

/** How often a claim is tried before giving up (each round may break one stale lock). */
const ROUNDS = 8;

export interface DirClaim {
  /** Whether `D/server.lock` is still this process's. */
  held(): boolean;
  /** Remove `D/server.lock` if it is still this process's. */
  release(): void;
}

/** Claim `root` for this process, or throw ERR_SHIMKIT_SERVER_RUNNING naming the live owner. */
export function claimServerDir(root: string): DirClaim {
  const lock = join(root, SERVER_LOCK);
  const text = `${JSON.stringify({ pid: process.pid, startedAt: Date.now() })}\n`;
  for (let round = 0; round < ROUNDS; round++) {
    const temp = join(root, `.${SERVER_LOCK}.${process.pid}.tmp`);
    writeFileSync(temp, text, { mode: 0o600 });
    let identity: { ino: number; dev: number } | undefined;
    try {
      linkSync(temp, lock);
      const { ino, dev } = lstatSync(temp);
      identity = { ino, dev };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      unlinkSync(temp);
    }
    if (identity) return ownClaim(lock, identity);
    const other = readOrUndefined(lock);
    if (other === undefined) continue; // removed meanwhile: try again
    const pid = ownerPid(other);
    if (pid !== undefined && pid !== process.pid && isAlive(pid)) {
      throw new ShimkitError(
        'ERR_SHIMKIT_SERVER_RUNNING',
        `a mock server already runs (or is starting) in ${root}: pid ${pid} holds ${lock}. Stop it first (shimkit stop ${shQuote(root)}), or use another dir.`,
      );
    }
    breakStale(lock, other);
  }
  throw new ShimkitError(
    'ERR_SHIMKIT_SERVER_RUNNING',
    `cannot claim ${root}: ${lock} changed hands ${ROUNDS} times while this server tried to take it (other servers are starting there). Use a dir of this server's own.`,
  );
}

function ownClaim(lock: string, identity: { ino: number; dev: number }): DirClaim {
  const held = () => {
    try {
      const now = lstatSync(lock);
      return now.ino === identity.ino && now.dev === identity.dev;
    } catch {
      return false;
    }
  };
  return {
    held,
    release: () => {
      if (!held()) return;
      try {
        unlinkSync(lock);
      } catch {
        // gone with D
      }
    },
  };
}

/** Move the stale lock `seen` aside and remove it; a live one moved by mistake is linked back. */
function breakStale(lock: string, seen: string): void {
  const aside = join(lock, '..', `.${SERVER_LOCK}.${process.pid}.stale`);
  try {
    renameSync(lock, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return; // another starter broke it
    throw error;
  }
  try {
    if (readOrUndefined(aside) !== seen) {
      try {
        linkSync(aside, lock);
      } catch {
        // a third server claimed meanwhile: the one whose lock this was sees it is gone, and stops
      }
    }
  } finally {
    unlinkSync(aside);
  }
}

function readOrUndefined(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** The pid in a lock's text; undefined when it is not what a serve writes (then it is stale). */
function ownerPid(text: string): number | undefined {
  try {
    const pid = (JSON.parse(text) as { pid?: unknown }).pid;
    return Number.isInteger(pid) && (pid as number) > 0 ? (pid as number) : undefined;
  } catch {
    return undefined;
  }
}

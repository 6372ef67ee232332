import { existsSync, readFileSync, statSync } from 'node:fs';
import { errnoCode, ProtocolError, stateError } from './errors.js';
import { callPath, claimPath, generationPath, queuePath } from './layout.js';
import { completeLines, countLines } from './lines.js';
import { parseRecordText, recordId } from './records.js';
import { firstFree } from './search.js';
import { readState, readText } from './state.js';
import { RECORD_UNFINISHED_MODE, type WireCallRecord } from './types.js';

/**
 * The reader's half of the protocol, used by the test process: what the live
 * generation holds, read without any lock. Records of finished calls never
 * change again, so a `RecordCache` keeps them and a repeated `calls()` reads
 * only what is new or still running.
 */

/** Everything a reader needs about the live generation. */
export interface Snapshot {
  genDir: string;
  /** Raw queue lines (JSON text), 1-based position = index + 1. */
  queue: string[];
  /** Response number → number of the call that claimed it (0 if that call left no record). */
  claims: Map<number, number>;
  /** Call records in call order. */
  calls: SnapshotRecord[];
}

export interface SnapshotRecord extends WireCallRecord {
  /** The call could not write its last line (see `RECORD_UNFINISHED_MODE`). */
  unfinished?: boolean;
}

/**
 * Records of one generation already read, by call number. A finished record
 * never changes again; a running one only grows (lines are appended) or
 * changes mode (see `RECORD_UNFINISHED_MODE`), so a cheap stat tells whether
 * it must be read again.
 */
export class RecordCache {
  #genDir = '';
  readonly #records = new Map<number, { record: SnapshotRecord; size: number; mode: number }>();

  /** The record of call `seq`, from the cache if it has not changed. */
  read(genDir: string, seq: number): SnapshotRecord | undefined {
    if (genDir !== this.#genDir) {
      this.#records.clear();
      this.#genDir = genDir;
    }
    const file = callPath(genDir, seq);
    const known = this.#records.get(seq);
    if (known && known.record.status !== 'running') return known.record;
    let stat: { size: number; mode: number } | undefined;
    if (known) {
      stat = statOptional(file);
      if (stat === undefined) return undefined;
      if (stat.size === known.size && stat.mode === known.mode) return known.record;
    }
    const text = readOptional(file);
    if (text === undefined) return undefined;
    const record: SnapshotRecord | undefined = parseRecordText(text, seq, file);
    if (!record) return undefined;
    if (record.status === 'running') {
      stat ??= statOptional(file);
      if (stat === undefined) return undefined;
      if ((stat.mode & 0o777) === RECORD_UNFINISHED_MODE) record.unfinished = true;
      // The size of what was parsed, not of what was stat'ed: a line appended in between is read next time.
      this.#records.set(seq, { record, size: Buffer.byteLength(text), mode: stat.mode });
    } else {
      this.#records.set(seq, { record, size: 0, mode: 0 });
    }
    return record;
  }
}

export function liveGeneration(stateDir: string): string {
  return generationPath(stateDir, readState(stateDir).generation);
}

export function readSnapshot(stateDir: string, cache = new RecordCache()): Snapshot {
  const genDir = liveGeneration(stateDir);
  // Claims and calls are read before the queue: every claim refers to a line
  // that was in the queue when it was claimed, and lines are only appended.
  const claimedCount = taken(genDir, claimPath);
  const claimed = { has: (n: number) => n >= 1 && n <= claimedCount };
  const calls: SnapshotRecord[] = [];
  const callCount = taken(genDir, callPath);
  for (let seq = 1; seq <= callCount; seq++) {
    const record = cache.read(genDir, seq);
    if (record) calls.push(record);
  }
  const claims = new Map<number, number>();
  const byId = new Map(calls.map((c) => [c.id, c]));
  for (const call of calls) {
    if (call.source === 'queue' && call.response !== undefined && claimed.has(call.response)) {
      claims.set(call.response, call.seq);
    }
  }
  // A call killed right after claiming has not said what it claimed: its
  // claim marker (a link of its record) names it.
  for (let n = 1; n <= claimedCount; n++) {
    if (claims.has(n)) continue;
    const file = claimPath(genDir, n);
    const owner = byId.get(recordId(readOptional(file) ?? '', file) ?? '');
    if (owner && owner.source === undefined) Object.assign(owner, { source: 'queue', response: n });
    claims.set(n, owner?.seq ?? 0);
  }
  const queue = completeLines(readText(queuePath(genDir)));
  return { genDir, queue, claims, calls };
}

/** Number of calls recorded in the live generation (started or finished). */
export function countCalls(stateDir: string): number {
  return taken(liveGeneration(stateDir), callPath);
}

/** Number of responses in the live queue (complete lines). */
export function queueLength(stateDir: string): number {
  return countLines(readText(queuePath(liveGeneration(stateDir))));
}

function statOptional(file: string): { size: number; mode: number } | undefined {
  try {
    return statSync(file);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    throw stateError(error, file, 'test');
  }
}

/** A state file's text, or undefined if it is gone (a reader racing a reset). */
function readOptional(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    throw stateError(error, file, 'test');
  }
}

/**
 * How many call records or claim markers a generation holds. Both are only
 * ever created at the lowest free number, so they are always 1..n and an
 * existence search finds n without listing the dir (see search.ts).
 */
function taken(genDir: string, path: (genDir: string, n: number) => string): number {
  if (!existsSync(genDir)) {
    throw new ProtocolError(
      'a generation dir is missing (was it deleted from outside shimkit?)',
      genDir,
    );
  }
  return firstFree((n) => existsSync(path(genDir, n))) - 1;
}

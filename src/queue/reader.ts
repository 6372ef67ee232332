import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { errnoCode, ProtocolError, stateError } from './errors.js';
import {
  callPath,
  claimPath,
  generationPath,
  queuePath,
  routedPath,
  SLOT_PATTERN,
} from './layout.js';
import { completeLines, countLines } from './lines.js';
import { isAlive } from './process-alive.js';
import { claimOwner, parseRecord, type RecordStat, recordTimes } from './records.js';
import { firstFree } from './search.js';
import { readState, readText } from './state.js';
import type { WireCallRecord } from './types.js';

/**
 * The reader's half of the protocol, used by the test process: what the live
 * generation holds, read without any lock. Records of finished calls never
 * change again, so a `RecordCache` keeps them and a repeated `calls()` reads
 * only what is new or still running.
 */

/** Everything a reader needs about the live generation. */
export interface Snapshot {
  genDir: string;
  /** Raw queue lines (JSON text), 1-based position = index + 1 (empty unless asked for). */
  queue: string[];
  /**
   * Response number → numbers of the calls that used it (0 for a claim whose
   * call left no record): one, or up to `times` in a routed generation.
   */
  claims: Map<number, number[]>;
  /** Call records in call order. */
  calls: SnapshotRecord[];
}

export interface SnapshotRecord extends WireCallRecord {
  /** Still "running" on disk, but its process is gone: it died before its last line. */
  ended?: boolean;
  /** …and it marked its record as unable to write that line (see `RECORD_UNFINISHED_MODE`). */
  unfinished?: boolean;
}

interface Cached {
  record: SnapshotRecord;
  size: number;
  mode: number;
}

/**
 * Records of one generation already read, by call number. A finished record
 * never changes again; a running one only grows (lines are appended) or
 * changes mode (see `RECORD_UNFINISHED_MODE`), so a cheap stat tells whether
 * it must be read again. The cache hands out its records; the snapshot copies
 * a running one before adding to it.
 */
export class RecordCache {
  #genDir = '';
  readonly #records = new Map<number, Cached>();

  /** The record of call `seq` (from the cache if it has not changed, or read again if `fresh`). */
  read(genDir: string, seq: number, fresh = false): SnapshotRecord | undefined {
    if (genDir !== this.#genDir) {
      this.#records.clear();
      this.#genDir = genDir;
    }
    const file = callPath(genDir, seq);
    const known = this.#records.get(seq);
    if (known && known.record.status !== 'running') return known.record;
    let stat: { size: number; mode: number } | undefined;
    if (known && !fresh) {
      stat = statOptional(file);
      if (stat === undefined) return undefined;
      if (stat.size === known.size && stat.mode === known.mode) return known.record;
    }
    const bytes = readOptional(file);
    if (bytes === undefined) return undefined;
    const record: SnapshotRecord | undefined = parseRecord(bytes, seq, file, timesOf(file));
    if (!record) return undefined;
    if (record.status === 'running') {
      stat = statOptional(file);
      if (stat === undefined) return undefined;
      // Not writable by its owner: marked as unable to write its last line (0400; 0444 on Windows).
      if ((stat.mode & 0o200) === 0) record.unfinished = true;
      // The size of what was parsed, not of what was stat'ed: a line appended in between is read next time.
      this.#records.set(seq, { record, size: bytes.length, mode: stat.mode });
    } else {
      this.#records.set(seq, { record, size: 0, mode: 0 });
    }
    return record;
  }
}

export function liveGeneration(stateDir: string): string {
  return generationPath(stateDir, readState(stateDir).generation);
}

/**
 * The live generation as the test process sees it. Read in this order:
 * records, then claim markers, then the queue — a record that says it claimed
 * response n wrote that line after its marker existed, and a marker refers to
 * a line that was in the queue when it was made (lines are only appended).
 * `queue: false` skips reading the queue (`calls()` needs none of it).
 */
export function readSnapshot(
  stateDir: string,
  cache = new RecordCache(),
  options: { queue?: boolean } = {},
): Snapshot {
  const genDir = liveGeneration(stateDir);
  const calls: SnapshotRecord[] = [];
  const callCount = taken(genDir, callPath);
  for (let seq = 1; seq <= callCount; seq++) {
    const record = settled(genDir, seq, cache);
    if (record) calls.push(record);
  }
  const claims = new Map<number, number[]>();
  const add = (n: number, seq: number) => {
    const list = claims.get(n);
    if (list) list.push(seq);
    else claims.set(n, [seq]);
  };
  for (const call of calls) {
    if (call.source === 'queue' && call.response !== undefined) add(call.response, call.seq);
  }
  // A call killed right after claiming has not said what it claimed: its
  // claim marker (a link of its record, or from the sh shim `{"seq":<n>}`) names it.
  const byId = new Map(calls.flatMap((c) => [[c.id, c] as const, [`seq:${c.seq}`, c] as const]));
  for (const { n, file } of claimMarkers(genDir)) {
    const bytes = readOptional(file);
    const owner = bytes && byId.get(claimOwner(bytes, file) ?? '');
    if (owner && owner.source !== undefined) continue; // counted from its record
    if (owner) Object.assign(owner, { source: 'queue', response: n });
    add(n, owner?.seq ?? 0);
  }
  const queue = options.queue === false ? [] : completeLines(readText(queuePath(genDir)));
  return { genDir, queue, claims, calls };
}

/**
 * Record `seq` as it stands: a running record whose process is gone is read
 * once more (it may have finished between the read and the liveness check)
 * and, if still running on disk, marked `ended`. A running record is a copy,
 * so nothing added to it reaches the cache.
 */
function settled(genDir: string, seq: number, cache: RecordCache): SnapshotRecord | undefined {
  const record = cache.read(genDir, seq);
  if (record?.status !== 'running') return record;
  if (isAlive(record.pid, record.startedAt)) return { ...record };
  const again = cache.read(genDir, seq, true);
  if (again?.status !== 'running') return again;
  return { ...again, ended: true };
}

/**
 * The claim markers of a generation. A plain one holds only `claims/1..m`
 * (found by an existence search); a routed one any response's slots
 * (listed).
 */
function claimMarkers(genDir: string): Array<{ n: number; file: string }> {
  if (!existsSync(routedPath(genDir))) {
    const m = taken(genDir, claimPath);
    return Array.from({ length: m }, (_, i) => ({ n: i + 1, file: claimPath(genDir, i + 1) }));
  }
  const dir = join(genDir, 'claims');
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return [];
    throw stateError(error, dir, 'test');
  }
  const markers: Array<{ n: number; file: string }> = [];
  for (const name of names) {
    const m = SLOT_PATTERN.exec(name);
    if (m) markers.push({ n: Number(m[1]), file: join(dir, name) });
  }
  return markers.sort((a, b) => a.n - b.n);
}

/** Number of calls recorded in the live generation (started or finished). */
export function countCalls(stateDir: string): number {
  return taken(liveGeneration(stateDir), callPath);
}

/** Number of responses in the live queue (complete lines). */
export function queueLength(stateDir: string): number {
  return countLines(readText(queuePath(liveGeneration(stateDir))));
}

/** A record's inode and times, for records the sh shim wrote (see records.ts). */
function timesOf(file: string): RecordStat {
  return () => {
    try {
      return recordTimes(statSync(file, { bigint: true }));
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return undefined;
      throw stateError(error, file, 'test');
    }
  };
}

function statOptional(file: string): { size: number; mode: number } | undefined {
  try {
    return statSync(file);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    throw stateError(error, file, 'test');
  }
}

/** A state file's bytes, or undefined if it is gone (a reader racing a reset). */
function readOptional(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
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

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { errnoCode, ProtocolError, stateError } from './errors.js';
import {
  CALL_FILE_PATTERN,
  CLAIM_FILE_PATTERN,
  callPath,
  callsDir,
  claimPath,
  claimsDir,
  generationPath,
  queuePath,
} from './layout.js';
import { completeLines, countLines } from './lines.js';
import { parseRecordText, recordId } from './records.js';
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

/** Finished records of one generation, by call number. */
export class RecordCache {
  #genDir = '';
  readonly #records = new Map<number, SnapshotRecord>();

  get(genDir: string, seq: number): SnapshotRecord | undefined {
    if (genDir !== this.#genDir) {
      this.#records.clear();
      this.#genDir = genDir;
    }
    return this.#records.get(seq);
  }

  keep(record: SnapshotRecord): void {
    if (record.status !== 'running') this.#records.set(record.seq, record);
  }
}

export function liveGeneration(stateDir: string): string {
  return generationPath(stateDir, readState(stateDir).generation);
}

export function readSnapshot(stateDir: string, cache = new RecordCache()): Snapshot {
  const genDir = liveGeneration(stateDir);
  // Claims and calls are read before the queue: every claim refers to a line
  // that was in the queue when it was claimed, and lines are only appended.
  const claimed = numbers(claimsDir(genDir), CLAIM_FILE_PATTERN);
  const calls: SnapshotRecord[] = [];
  for (const seq of callNumbers(genDir)) {
    const record = cache.get(genDir, seq) ?? readRecord(genDir, seq);
    if (!record) continue;
    cache.keep(record);
    calls.push(record);
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
  for (const n of claimed) {
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
  return callNumbers(liveGeneration(stateDir)).length;
}

/** Number of responses in the live queue (complete lines). */
export function queueLength(stateDir: string): number {
  return countLines(readText(queuePath(liveGeneration(stateDir))));
}

function readRecord(genDir: string, seq: number): SnapshotRecord | undefined {
  const file = callPath(genDir, seq);
  const text = readOptional(file);
  if (text === undefined) return undefined;
  const record: SnapshotRecord | undefined = parseRecordText(text, seq, file);
  if (record?.status === 'running' && isUnfinished(file)) record.unfinished = true;
  return record;
}

function isUnfinished(file: string): boolean {
  try {
    return (statSync(file).mode & 0o777) === RECORD_UNFINISHED_MODE;
  } catch {
    return false;
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

function callNumbers(genDir: string): number[] {
  return [...numbers(callsDir(genDir), CALL_FILE_PATTERN)].sort((a, b) => a - b);
}

/** The numbers in the names of a dir's entries that match `pattern` (its first group, or the whole name). */
function numbers(dir: string, pattern: RegExp): Set<number> {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (cause) {
    throw new ProtocolError('a state dir cannot be listed', dir, { cause });
  }
  const found = new Set<number>();
  for (const name of names) {
    const match = pattern.exec(name);
    if (match) found.add(Number(match[1] ?? match[0]));
  }
  return found;
}

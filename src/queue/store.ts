import { mkdirSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeTree } from '../internal/temp-dir.js';
import { writeFileAtomic } from './atomic.js';
import { countLines, readState, readText } from './claim.js';
import { ProtocolError } from './errors.js';
import {
  CALL_FILE_PATTERN,
  CLAIM_FILE_PATTERN,
  callsDir,
  claimsDir,
  lockPath,
  queuePath,
  statePath,
} from './layout.js';
import { acquireLock, releaseLock } from './lock.js';
import type { WireCallRecord, WireConfig, WireState } from './types.js';

/**
 * The writer's half of the protocol, used by the test process (and the CLI):
 * set up a state dir, append to the queue under the lock, start a new
 * generation on reset, and read back claims and call records.
 */

/** How long a writer waits for the queue lock before giving up with an error. */
const WRITER_LOCK_TIMEOUT_MS = 10_000;

export function initState(stateDir: string, config: WireConfig): void {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  buildGeneration(stateDir, 1);
  writeState(stateDir, { generation: 'g1', config });
}

/** Forget all responses and calls: switch to a fresh generation and delete the old one. */
export function resetState(stateDir: string): void {
  const state = readState(stateDir);
  const next = Number(state.generation.slice(1)) + 1;
  buildGeneration(stateDir, next);
  writeState(stateDir, { ...state, generation: `g${next}` });
  // A call still in flight keeps the old generation's paths; once the dir is
  // renamed away its writes fail instead of landing anywhere else.
  removeTree(join(stateDir, state.generation));
}

function writeState(stateDir: string, state: WireState): void {
  writeFileAtomic(statePath(stateDir), `${JSON.stringify(state)}\n`);
}

/** A generation is built under a temp name and renamed into place, so it appears complete. */
function buildGeneration(stateDir: string, n: number): void {
  const temp = join(stateDir, `.g${n}.${process.pid}.build`);
  mkdirSync(join(temp, 'claims'), { recursive: true, mode: 0o700 });
  mkdirSync(join(temp, 'calls'), { mode: 0o700 });
  writeFileSync(join(temp, 'queue.jsonl'), '', { mode: 0o600 });
  writeFileSync(join(temp, 'cursor'), '1 1\n', { mode: 0o600 });
  renameSync(temp, join(stateDir, `g${n}`));
}

export function liveGeneration(stateDir: string): string {
  return join(stateDir, readState(stateDir).generation);
}

/** Append JSONL lines to the live queue under the lock; returns the new queue length. */
export function appendToQueue(stateDir: string, lines: readonly string[]): number {
  const genDir = liveGeneration(stateDir);
  const lock = acquireLock(lockPath(genDir), { deadline: Date.now() + WRITER_LOCK_TIMEOUT_MS });
  try {
    const file = queuePath(genDir);
    const text = readText(file) + lines.map((line) => `${line}\n`).join('');
    writeFileAtomic(file, text);
    return countLines(text);
  } finally {
    releaseLock(lock);
  }
}

/** Everything a reader needs about the live generation, read without the lock. */
export interface Snapshot {
  genDir: string;
  /** Raw queue lines (JSON text), 1-based position = index + 1. */
  queue: string[];
  /** Response number → number of the call that claimed it (from the claim marker). */
  claims: Map<number, number>;
  /** Call records in call order. */
  calls: WireCallRecord[];
}

export function readSnapshot(stateDir: string): Snapshot {
  const genDir = liveGeneration(stateDir);
  // Claims and calls are read before the queue: every claim refers to a line
  // that was in the queue when it was claimed, and lines are only appended.
  const claims = new Map<number, number>();
  for (const name of listDir(claimsDir(genDir))) {
    if (!CLAIM_FILE_PATTERN.test(name)) continue;
    const file = join(claimsDir(genDir), name);
    claims.set(Number(name), (parseRecord(file) as WireCallRecord).seq);
  }
  const calls: WireCallRecord[] = [];
  for (const seq of callNumbers(genDir)) {
    calls.push(parseRecord(join(callsDir(genDir), `${seq}.json`)));
  }
  const queueText = readText(queuePath(genDir));
  const queue = queueText === '' ? [] : queueText.slice(0, -1).split('\n');
  return { genDir, queue, claims, calls };
}

/** Number of calls recorded in the live generation (started or finished). */
export function countCalls(stateDir: string): number {
  return callNumbers(liveGeneration(stateDir)).length;
}

/** Number of responses in the live queue. */
export function queueLength(stateDir: string): number {
  return countLines(readText(queuePath(liveGeneration(stateDir))));
}

function parseRecord(file: string): WireCallRecord {
  const text = readText(file);
  try {
    return JSON.parse(text) as WireCallRecord;
  } catch (cause) {
    throw new ProtocolError('a call record is not valid JSON', file, { cause });
  }
}

function callNumbers(genDir: string): number[] {
  const numbers: number[] = [];
  for (const name of listDir(callsDir(genDir))) {
    const match = CALL_FILE_PATTERN.exec(name);
    if (match) numbers.push(Number(match[1]));
  }
  return numbers.sort((a, b) => a - b);
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch (cause) {
    throw new ProtocolError('a state dir cannot be listed', dir, { cause });
  }
}

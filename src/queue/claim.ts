import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { publishExclusive, writeFileAtomic } from './atomic.js';
import { errnoCode, ProtocolError } from './errors.js';
import {
  claimPath,
  configPath,
  currentPath,
  cursorPath,
  GENERATION_PATTERN,
  lockPath,
  queuePath,
} from './layout.js';
import { acquireLock, releaseLock } from './lock.js';
import { publishCallRecord } from './records.js';
import type { WireCallRecord, WireConfig } from './types.js';

/** What a call got from the queue, decided under the lock. */
export interface Claim {
  config: WireConfig;
  genDir: string;
  seq: number;
  /** The queue file as read under the lock. */
  queueText: string;
  /** Number of responses in the queue. */
  total: number;
  /** 1-based number of the response this call claimed, or 0 if the queue was exhausted. */
  claimed: number;
  /** The call record as published. */
  record: WireCallRecord;
}

/**
 * The claim protocol, run by every call:
 *  1. read `config.json` and `current` (the live generation);
 *  2. take the generation's lock (ordering only);
 *  3. publish the call record `calls/<seq>.json` exclusively, starting at the cursor's hint;
 *  4. claim the first free response at or after the hint by publishing `claims/<n>` exclusively;
 *  5. advance the cursor hint, release the lock.
 * Steps 3 and 4 are correct without the lock: two callers can never publish the
 * same record or claim marker, they only skip ahead.
 */
export function claimCall(
  stateDir: string,
  describeCall: (config: WireConfig) => Omit<WireCallRecord, 'seq'>,
  startedAt: number,
): Claim {
  const config = readConfig(stateDir);
  const genDir = join(stateDir, readCurrent(stateDir));
  const lockStart = Date.now();
  const lock = acquireLock(lockPath(genDir), { deadline: startedAt + config.timeoutMs });
  try {
    const fields = { ...describeCall(config), lockWaitMs: Date.now() - lockStart };
    const [nextCall, nextResponse] = readCursor(genDir);
    const seq = publishCallRecord(genDir, nextCall, fields);
    const queueText = readText(queuePath(genDir));
    const total = countLines(queueText);
    let n = nextResponse;
    while (n <= total && !publishExclusive(claimPath(genDir, n), `${seq}\n`)) n += 1;
    const claimed = n <= total ? n : 0;
    writeFileAtomic(cursorPath(genDir), `${seq + 1} ${claimed ? claimed + 1 : n}\n`);
    return { config, genDir, seq, queueText, total, claimed, record: { seq, ...fields } };
  } finally {
    releaseLock(lock);
  }
}

export function readConfig(stateDir: string): WireConfig {
  const file = configPath(stateDir);
  const text = readText(file);
  try {
    return JSON.parse(text) as WireConfig;
  } catch (cause) {
    throw new ProtocolError('the mock config is not valid JSON', file, { cause });
  }
}

export function readCurrent(stateDir: string): string {
  const file = currentPath(stateDir);
  const name = readText(file).trim();
  if (!GENERATION_PATTERN.test(name)) {
    throw new ProtocolError(
      `the generation pointer holds ${JSON.stringify(name)}, not "g<n>"`,
      file,
    );
  }
  return name;
}

function readCursor(genDir: string): [number, number] {
  const file = cursorPath(genDir);
  const match = /^([1-9][0-9]*) ([1-9][0-9]*)\n$/.exec(readText(file));
  if (!match) throw new ProtocolError('the queue cursor is malformed', file);
  return [Number(match[1]), Number(match[2])];
}

/** Read a protocol file; a missing or unreadable one is a `ProtocolError` naming it. */
export function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (cause) {
    const code = errnoCode(cause);
    const why =
      code === 'ENOENT'
        ? 'is missing (was the mock disposed or reset while this call ran?)'
        : `cannot be read (${code ?? String(cause)})`;
    throw new ProtocolError(`a state file ${why}`, file, { cause });
  }
}

/** Number of lines in a JSONL text where every line ends with "\n". */
export function countLines(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count += 1;
  return count;
}

/** The n-th (1-based) line of a JSONL text, without its newline. */
export function lineAt(text: string, n: number): string {
  let start = 0;
  for (let i = 1; i < n; i++) start = text.indexOf('\n', start) + 1;
  const end = text.indexOf('\n', start);
  return text.slice(start, end === -1 ? undefined : end);
}

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { linkExclusive, writeFileAtomic } from './atomic.js';
import { errnoCode, ProtocolError } from './errors.js';
import {
  callPath,
  claimPath,
  cursorPath,
  GENERATION_PATTERN,
  lockPath,
  queuePath,
  statePath,
} from './layout.js';
import { acquireLock, releaseLock } from './lock.js';
import { publishCallRecord, updateCallRecord } from './records.js';
import type { ResponseSource, WireCallRecord, WireConfig, WireState } from './types.js';

/** What a call got from the queue, decided under the lock. */
export interface Claim {
  config: WireConfig;
  genDir: string;
  /** The queue file as read under the lock. */
  queueText: string;
  /** Number of responses in the queue. */
  total: number;
  /** The call record as published: its `source` and `response` say what the call got. */
  record: WireCallRecord;
}

type CallFields = Omit<WireCallRecord, 'seq' | 'source' | 'response'>;

/**
 * The claim protocol, run by every call:
 *  1. read `state.json` (the live generation and the options);
 *  2. take the generation's lock (ordering only, see lock.ts);
 *  3. read the cursor hint and the queue; the candidate is the hinted response;
 *  4. publish the call record `calls/<seq>.json` exclusively (temp file + link);
 *  5. claim the candidate by hard-linking that record as `claims/<n>`; if the
 *     marker exists, move to the next response and try again;
 *  6. advance the cursor hint, release the lock.
 * Steps 4 and 5 are exclusive in the file system itself: two callers that both
 * believe they hold the lock still cannot publish the same record or claim the
 * same response; they only skip ahead. A reader trusts a record's response only
 * if the claim marker agrees (a call killed between 4 and 5 claimed nothing).
 */
export function claimCall(
  stateDir: string,
  describeCall: (config: WireConfig) => CallFields,
  startedAt: number,
): Claim {
  const { generation, config } = readState(stateDir);
  const genDir = join(stateDir, generation);
  const lockStart = Date.now();
  const lock = acquireLock(lockPath(genDir), { deadline: startedAt + config.timeoutMs });
  try {
    const fields: CallFields = { ...describeCall(config), lockWaitMs: Date.now() - lockStart };
    const [nextCall, nextResponse] = readCursor(genDir);
    const queueText = readText(queuePath(genDir));
    const total = countLines(queueText);
    let n = nextResponse;
    const decide = (): Pick<WireCallRecord, 'source' | 'response'> =>
      n <= total ? { source: 'queue', response: n } : whenExhausted(config, total);

    let record = publishCallRecord(genDir, nextCall, { ...fields, ...decide() });
    while (n <= total && !linkExclusive(callPath(genDir, record.seq), claimPath(genDir, n))) {
      n += 1;
      record = { seq: record.seq, ...fields, ...decide() };
      updateCallRecord(genDir, record);
    }
    writeFileAtomic(cursorPath(genDir), `${record.seq + 1} ${n <= total ? n + 1 : n}\n`);
    return { config, genDir, queueText, total, record };
  } finally {
    releaseLock(lock);
  }
}

/** What a call gets when every queued response is claimed. */
function whenExhausted(
  config: WireConfig,
  total: number,
): { source: ResponseSource; response?: number } {
  if (typeof config.onExhausted === 'object') return { source: 'fallback' };
  if (config.onExhausted === 'fail') return { source: 'none' };
  if (total === 0) return { source: 'default' };
  return { source: 'repeat', response: total };
}

export function readState(stateDir: string): WireState {
  const file = statePath(stateDir);
  const text = readText(file);
  let state: WireState;
  try {
    state = JSON.parse(text) as WireState;
  } catch (cause) {
    throw new ProtocolError('the mock state is not valid JSON', file, { cause });
  }
  if (typeof state?.generation !== 'string' || !GENERATION_PATTERN.test(state.generation)) {
    throw new ProtocolError(
      `the mock state names generation ${JSON.stringify(state?.generation)}, not "g<n>"`,
      file,
    );
  }
  if (typeof state.config !== 'object' || state.config === null) {
    throw new ProtocolError('the mock state has no config', file);
  }
  return state;
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

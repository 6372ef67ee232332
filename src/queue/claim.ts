import { existsSync } from 'node:fs';
import { createTemp, linkExclusive, tryClose, tryUnlink, writeBytes } from './atomic.js';
import { callPath, claimPath, generationPath, queuePath, routedPath } from './layout.js';
import { countLines } from './lines.js';
import { recordLine } from './records.js';
import { firstFree } from './search.js';
import { readState, readText } from './state.js';
import type { CallStep, ResponseSource, WireCallRecord, WireConfig } from './types.js';

/** What a call got from the queue. */
export interface Claim {
  config: WireConfig;
  genDir: string;
  /** Whether the generation is routed (see route-claim.ts). */
  routed: boolean;
  /** The queue file as this call read it. */
  queueText: string;
  /** Number of responses in it. */
  total: number;
  /** The call record so far: its `source` and `response` say what the call got. */
  record: WireCallRecord;
  /** The record file, open for appending the call's last line. */
  fd: number;
}

export type CallFields = Omit<WireCallRecord, 'seq' | 'source' | 'response'>;

/** The routed claim (route-claim.ts), passed in so the runner can load it only when needed. */
export type RoutedClaimer = (input: {
  genDir: string;
  seq: number;
  queueText: string;
  fields: CallFields;
  config: WireConfig;
  link: (existing: string, target: string) => boolean;
}) => { source: ResponseSource; response?: number };

/**
 * The claim protocol, run by every call, with no lock:
 *  1. read `state.json` (the live generation and the options) and the queue;
 *  2. publish the call record at the first free `calls/<seq>.json`
 *     (a temp file hard-linked into place: exclusive, never seen half-written);
 *  3. claim the first free response by hard-linking that record as
 *     `claims/<n>`; if the marker exists, try n + 1;
 *  4. append what it got to the record.
 * `link(2)` succeeds for at most one caller per name, so two calls can never
 * share a record number or a response, whatever the timing; a call that dies
 * between two steps leaves a record without a claim, or a claim whose marker
 * names it — never a response claimed by nobody in particular. Where to start
 * looking is found by existence (see search.ts), not from a shared cursor
 * file, so a stopped or killed call can never hold anyone up.
 */
export function claimCall(
  stateDir: string,
  describeCall: (config: WireConfig) => CallFields,
  claimRouted: RoutedClaimer,
): Claim {
  const { generation, config } = readState(stateDir);
  const genDir = generationPath(stateDir, generation);
  stopAt(config, 'started');
  const start = Date.now();
  const fields = describeCall(config);
  const queueText = readText(queuePath(genDir));
  const total = countLines(queueText);
  // After the queue: a routed line is appended only once the marker exists.
  const routed = total > 0 && existsSync(routedPath(genDir));

  const { seq, fd } = publishRecord(genDir, fields);
  try {
    stopAt(config, 'recorded');
    const decision = decideClaim(
      { config, genDir, routed, queueText, total },
      seq,
      fields,
      claimRouted,
    );
    stopAt(config, 'claimed');
    const claimMs = Date.now() - start;
    writeBytes(fd, Buffer.from(recordLine({ ...decision, claimMs })));
    stopAt(config, 'decided');
    return {
      config,
      genDir,
      routed,
      queueText,
      total,
      record: { seq, ...fields, ...decision, claimMs },
      fd,
    };
  } catch (error) {
    throw new RecordedFailure(error, fd);
  }
}

/**
 * Step 3 for call `seq`, whose record is published: the first free response
 * it may have (a routed generation matches; see route-claim.ts), or what it
 * gets when none is left.
 */
export function decideClaim(
  queue: Pick<Claim, 'config' | 'genDir' | 'routed' | 'queueText' | 'total'>,
  seq: number,
  fields: CallFields,
  claimRouted: RoutedClaimer,
): { source: ResponseSource; response?: number } {
  const { config, genDir, routed, queueText, total } = queue;
  if (routed) {
    return claimRouted({ genDir, seq, queueText, fields, config, link: linkExclusive });
  }
  const taken = (k: number) => existsSync(claimPath(genDir, k));
  let n = firstFree(taken, total);
  while (n <= total && !linkExclusive(callPath(genDir, seq), claimPath(genDir, n))) n += 1;
  return n <= total ? { source: 'queue', response: n } : whenExhausted(config, total);
}

/**
 * Claiming failed after the call's record was published (the state dir went
 * away, the disk filled): the call must still end its record (`fd`, open for
 * appending), or readers would take it for killed.
 */
export class RecordedFailure extends Error {
  /** Told apart by this, not by class: the runner's hot and cold halves each bundle their own copy. */
  readonly recorded = true;
  constructor(
    override readonly cause: unknown,
    readonly fd: number,
  ) {
    super('claiming failed after the call was recorded');
  }
}

/** Whether `error` is a `RecordedFailure` (from either half of the runner). */
export function isRecordedFailure(error: unknown): error is RecordedFailure {
  return (error as { recorded?: unknown } | undefined)?.recorded === true;
}

/** Publish `fields` as the first line of the record at the first free number. */
function publishRecord(genDir: string, fields: CallFields): { seq: number; fd: number } {
  const temp = createTemp(callPath(genDir, 0), recordLine(fields));
  try {
    let seq = firstFree((k) => existsSync(callPath(genDir, k)));
    while (!linkExclusive(temp.path, callPath(genDir, seq))) seq += 1;
    return { seq, fd: temp.fd };
  } catch (error) {
    tryClose(temp.fd);
    throw error;
  } finally {
    tryUnlink(temp.path);
  }
}

/** What a call gets when every queued response is claimed. */
function whenExhausted(
  config: WireConfig,
  total: number,
): { source: ResponseSource; response?: number } {
  if (config.spy) return { source: 'passthrough' };
  if (typeof config.onExhausted === 'object') return { source: 'fallback' };
  if (config.onExhausted === 'fail') return { source: 'none' };
  if (total === 0) return { source: 'default' };
  return { source: 'repeat', response: total };
}

/** Test hook: stop this process at `step` when the state asks for it (see `WireConfig.stopAt`). */
export function stopAt(config: WireConfig, step: CallStep): void {
  if (config.stopAt === step) process.kill(process.pid, 'SIGSTOP');
}

import type { ServerResponse } from 'node:http';
import type { WireClaim, WireEntry, WorkerSettings } from '../protocol.js';
import type { Asker } from './ask.js';
import type { Script } from './claim.js';
import type { Exchange } from './exchange.js';
import type { Holds } from './holds.js';
import type { Intake } from './intake.js';
import type { EntryLog } from './log.js';
import type { Recorder } from './record.js';

/** What the worker's request handlers share (ServerCore owns them). */
export interface CoreParts {
  settings: WorkerSettings;
  script: Script;
  holds: Holds;
  log: EntryLog;
  asker: Asker;
  disposed(): boolean;
  /** A bug of shimkit's serving one request: that request ends, its entry says so. */
  internal(x: Exchange, cause: unknown): void;
  /** A request whose handling threw: its connection ends (the log written first). */
  drop(res: ServerResponse | undefined): void;
  /** The cassette's passthrough (record, record-missing): what no script entry takes goes upstream. */
  recorder: Recorder | undefined;
}

/** `POST /v1/x (request #3)`, for messages. */
export function labelOf(intake: Intake, seq: number): string {
  return `${intake.view.method} ${intake.view.path} (request #${seq})`;
}

/** What a request that is not HTTP at all is logged as: its raw bytes. */
export function rawIntake(raw: Buffer): Intake {
  return {
    view: { method: '', path: '', query: {}, headers: {}, body: raw },
    receivedAt: Date.now(),
    bodyBytes: raw.length,
    tooLarge: false,
    aborted: false,
  };
}

/** A log entry of `intake`, keeping `logBodyBytes` of its body. */
export function entryOf(
  parts: CoreParts,
  intake: Intake,
  seq: number,
  claim: WireClaim,
  claimedBy: string | null,
  error: string | undefined,
): WireEntry {
  const { view } = intake;
  return {
    seq,
    method: view.method,
    path: view.path,
    query: view.query,
    headers: view.headers,
    // The journal copies what it keeps (only this view's bytes).
    body:
      view.body.length <= parts.settings.logBodyBytes
        ? view.body
        : view.body.subarray(0, parts.settings.logBodyBytes),
    bodyBytes: intake.bodyBytes,
    receivedAt: intake.receivedAt,
    claimedBy,
    claim,
    error,
    unmatched: false,
    hold: undefined,
    status: undefined,
    bytesSent: 0,
    events: 0,
    endedBy: undefined,
    startedAt: undefined,
    endedAt: undefined,
  };
}

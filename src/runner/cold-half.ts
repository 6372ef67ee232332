/**
 * The runner's cold half (`dist/runner-cold.cjs`, ./cold.ts) as the hot half
 * sees it through `cold()` (./lazy.ts): the functions it calls, typed by the
 * modules that hold them, and `wait` with what the hot half passes it.
 *
 * Declared here rather than as `typeof import('./cold.js')`: the cold half
 * runs hot-half modules (./wait.ts ends a call with ./finish.ts, which loads
 * the cold half through ./lazy.ts), so lazy.ts typed by cold.ts was an import
 * circle. This module imports only leaves (no runner module that reaches
 * lazy.ts); test/types/runner-halves.test-d.ts checks that cold.ts still
 * exports all of it.
 */

import type { redactEnv } from '../internal/secrets.js';
import type { Claim } from '../queue/claim.js';
import type { responseProblem } from '../queue/response-schema.js';
import type { WireResponse } from '../queue/types.js';
import type { deletedCwd, rawArgv } from './argv.js';
import type {
  describeFailure,
  label,
  serveFailure,
  timeoutMessage,
  unmatchedMessage,
  Waiting,
} from './diagnostics.js';
import type { endRecord, recordFailed } from './record-failed.js';
import type { render } from './render.js';
import type { restOfResponse, resumeClaim } from './resume.js';

/** What the hot half does once the wait is over (./wait.ts). */
export interface AfterWait {
  /** Output, then exit with the scripted code. */
  serve(claim: Claim, response: WireResponse): void;
  /** Files and output only. */
  output(claim: Claim, response: WireResponse): void;
  timedOut(claim: Claim, waiting: Waiting, delayMs: number): void;
}

/** What the hot half calls of the cold half. */
export interface ColdHalf {
  deletedCwd: typeof deletedCwd;
  describeFailure: typeof describeFailure;
  endRecord: typeof endRecord;
  label: typeof label;
  rawArgv: typeof rawArgv;
  recordFailed: typeof recordFailed;
  redactEnv: typeof redactEnv;
  render: typeof render;
  responseProblem: typeof responseProblem;
  restOfResponse: typeof restOfResponse;
  resumeClaim: typeof resumeClaim;
  serveFailure: typeof serveFailure;
  timeoutMessage: typeof timeoutMessage;
  unmatchedMessage: typeof unmatchedMessage;
  /** ./wait.ts: stdin, the delay, then the response acted out. */
  wait(claim: Claim, response: WireResponse, deadline: number, after: AfterWait): Promise<void>;
}

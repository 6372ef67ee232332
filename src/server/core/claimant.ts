import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WireEntry } from '../protocol.js';
import { answer } from './answer.js';
import type { ClaimResult, PendingClaim, ScriptEntry } from './claim.js';
import type { RequestView } from './fit.js';
import type { Intake } from './intake.js';
import { type CoreParts, entryOf, labelOf } from './parts.js';

/**
 * A request whose body is in, as the claim queue holds it: one object with
 * its methods on the prototype, not a set of closures made per request (the
 * claim path is the mock server's hot path: PERF-10). Its claim is answered
 * by `answer()`; whatever that throws ends only this request
 * (`parts.drop`).
 */
export class Claimant implements PendingClaim {
  gen: number;
  seq: number;
  readonly view: RequestView;
  /** Made on the first verdict: most requests meet no predicate. */
  #verdicts: Map<ScriptEntry, boolean | string> | undefined;
  readonly #parts: CoreParts;
  readonly #req: IncomingMessage;
  readonly #res: ServerResponse;
  readonly #intake: Intake;

  constructor(
    parts: CoreParts,
    req: IncomingMessage,
    res: ServerResponse,
    intake: Intake,
    gen: number,
    seq: number,
  ) {
    this.#parts = parts;
    this.#req = req;
    this.#res = res;
    this.#intake = intake;
    this.view = intake.view;
    this.gen = gen;
    this.seq = seq;
  }

  get verdicts(): Map<ScriptEntry, boolean | string> {
    this.#verdicts ??= new Map();
    return this.#verdicts;
  }

  label(): string {
    return labelOf(this.#intake, this.seq);
  }

  entry(): WireEntry {
    return entryOf(this.#parts, this.#intake, this.seq, null, null, undefined);
  }

  done(result: ClaimResult): void {
    try {
      answer(this.#parts, this.#req, this.#res, this.#intake, this, result);
    } catch {
      this.#parts.drop(this.#res);
    }
  }
}

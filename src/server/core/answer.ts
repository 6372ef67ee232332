import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WireClaim } from '../protocol.js';
import type { WireHttpResponse } from '../types.js';
import { waitedFor } from './ask.js';
import type { ClaimResult, PendingClaim } from './claim.js';
import { Exchange } from './exchange.js';
import type { RequestView } from './fit.js';
import type { Intake } from './intake.js';
import { type CoreParts, entryOf } from './parts.js';
import { PlaybookFailure, type Take, type WorkerPlaybook } from './playbook/engine.js';
import { replayNote } from './replay.js';
import { fixedBody, serve, serveNow } from './serve.js';
import { echoResponse, errorResponse, unmatchedText } from './unmatched.js';

/** A response function to ask the test's thread for. */
interface Handler {
  id: number;
  what: string;
  kind: 'handler' | 'unmatched';
}

/**
 * Answer a claimed request: what answers it (the claimed data, a function
 * to ask for, or the `unmatched` policy), its log entry (posted now, before
 * any byte), the hold it falls into, then the serving.
 */
export function answer(
  parts: CoreParts,
  req: IncomingMessage,
  res: ServerResponse,
  intake: Intake,
  pending: PendingClaim,
  result: ClaimResult,
): void {
  if (result.kind === 'unmatched' && parts.recorder && !result.exhausted) {
    forward(parts, req, res, intake, pending);
    return;
  }
  const { gen, seq, view } = pending;
  const label = pending.label();
  let claim: WireClaim = null;
  let claimedBy: string | null = null;
  let wire: WireHttpResponse | undefined;
  let handler: Handler | undefined;
  let error: string | undefined;
  let play:
    | { playbook: WorkerPlaybook; take: Extract<Take, { kind: 'answer' | 'retry' }> }
    | undefined;
  let news: { id: number; json: string } | undefined;
  if (result.kind === 'playbook') {
    claim = { playbook: result.entry.id };
    claimedBy = result.entry.name;
    const items = result.entry.playbook.news();
    if (items.length > 0) news = { id: result.entry.id, json: JSON.stringify(items) };
    const { take } = result;
    if (take.kind === 'refused') {
      error = take.text;
      wire = errorResponse(500, 'shimkit_playbook_refused', error);
    } else play = { playbook: result.entry.playbook, take };
  } else if (result.kind === 'expect' || result.kind === 'fifo') {
    claim = result.kind === 'expect' ? { expect: result.id } : { fifo: result.index };
    claimedBy = result.kind === 'expect' ? result.name : `fifo#${result.index}`;
    const what =
      result.kind === 'expect' ? `expectation '${result.name}'` : `FIFO entry ${claimedBy}`;
    if ('wire' in result.answer) {
      wire = result.answer.wire;
      parts.script.answered(view, seq, wire, claimedBy);
    } else
      handler = {
        id: result.answer.handler,
        what: `the response function of ${what}`,
        kind: 'handler',
      };
  } else if (result.kind === 'failed') {
    error = result.error;
    wire = errorResponse(500, 'shimkit_predicate_failed', error);
  } else if (
    result.exhausted &&
    (parts.settings.unmatched === 'fail' || parts.recorder !== undefined)
  ) {
    // Never passed upstream: a recording would make a real, paid model request of it.
    error = exhausted(result.exhausted.playbook, view, label, seq);
    wire = errorResponse(500, 'shimkit_playbook_exhausted', error);
  } else if (parts.settings.unmatched === 'fail') {
    error = unmatchedText(
      parts.script,
      view,
      label,
      pending.verdicts,
      parts.settings.unmatchedAdvice,
    );
    if (parts.settings.cassette?.mode === 'replay')
      error += ` ${replayNote(parts.settings.cassette)}`;
    wire = errorResponse(500, 'shimkit_unmatched', error);
  } else {
    // The policy answers; an exhausted playbook still says it was asked for more.
    if (result.exhausted) exhausted(result.exhausted.playbook, view, label, seq);
    if (parts.settings.unmatched === 'echo') wire = echoResponse(view);
    else
      handler = { id: 0, what: 'the unmatched function of createMockServer()', kind: 'unmatched' };
  }
  const hold = parts.holds.bind(view, seq);
  const entry = entryOf(parts, intake, seq, claim, claimedBy, error);
  entry.unmatched = result.kind === 'unmatched';
  entry.hold = hold?.id;
  // A playbook's news goes with its entry at once; any other claimed entry waits for its first change.
  if (news === undefined) parts.log.claimed(gen, entry);
  else parts.log.entry(gen, entry, news);
  if (hold) {
    // Known now unless a function answers: whether a replacement could follow the hold point.
    const fixed = hold.afterEvents !== undefined && wire ? fixedBody(req.method, wire) : undefined;
    parts.log.post({
      type: 'held',
      gen,
      id: hold.id,
      seq,
      stage: 'received',
      ...(fixed === undefined ? {} : { fixed }),
    });
  }
  const timeoutMs = parts.settings.timeoutMs;
  const x = new Exchange({
    gen,
    seq,
    req,
    res,
    log: parts.log,
    timeoutMs,
    hold,
    label,
    disposed: parts.disposed,
    error,
  });
  // A retryable scripted response: a client that leaves before its last byte gives it back for its retry.
  if (wire?.retryable && claim !== null) x.requeue = () => parts.script.giveBack(result, gen);
  x.noticeGone();
  if (play === undefined && handler === undefined) {
    try {
      if (serveNow(x, wire as WireHttpResponse, error)) return;
    } catch (cause) {
      parts.internal(x, cause);
      return;
    }
  }
  const run = async () => {
    const now =
      play?.take.kind === 'answer'
        ? play.playbook.answerNow(play.take, seq, view.body, x)
        : undefined;
    if (now) wire = now;
    else if (play) {
      try {
        wire = await play.playbook.answer(
          play.take,
          (kind, target, what, detail) => parts.asker.ask(gen, kind, target, what, entry, detail),
          seq,
          label,
          view.body,
          x,
        );
      } catch (cause) {
        if (!(cause instanceof PlaybookFailure)) throw cause;
        if (parts.disposed()) return;
        error = cause.message;
        // A retry shares the failure of the request it repeats, which reported it.
        if (play.take.kind === 'answer') play.playbook.failed(error, seq);
        wire = errorResponse(500, 'shimkit_playbook_failed', error);
      }
    }
    if (handler) {
      const outcome = await parts.asker.ask(gen, handler.kind, handler.id, claimedBy ?? '', entry);
      if (
        outcome.kind === 'answer' &&
        typeof outcome.value === 'object' &&
        'status' in outcome.value
      ) {
        wire = outcome.value;
        if (wire.retryable && claim !== null) x.requeue = () => parts.script.giveBack(result, gen);
      } else if (outcome.kind === 'cancelled' && parts.disposed()) return;
      else {
        error =
          outcome.kind === 'timeout'
            ? waitedFor(handler.what, label, outcome.ms, outcome.reached)
            : outcome.kind === 'error'
              ? `shimkit: ${handler.what} failed for ${label}: ${outcome.error}`
              : `shimkit: ${handler.what} for ${label} was ended by reset().`;
        wire = errorResponse(500, 'shimkit_handler_failed', error);
      }
    }
    await serve(x, wire as WireHttpResponse, error);
  };
  run().catch((cause: unknown) => parts.internal(x, cause));
}

/** HT-09: a request for the cassette's upstream, logged as the interaction it is to be, then passed on. */
function forward(
  parts: CoreParts,
  req: IncomingMessage,
  res: ServerResponse,
  intake: Intake,
  pending: PendingClaim,
): void {
  const recorder = parts.recorder as NonNullable<CoreParts['recorder']>;
  const { gen, seq } = pending;
  const { n, name } = recorder.take();
  parts.log.entry(gen, entryOf(parts, intake, seq, null, name, undefined));
  const { timeoutMs } = parts.settings;
  const label = pending.label();
  const x = new Exchange({
    gen,
    seq,
    req,
    res,
    log: parts.log,
    timeoutMs,
    hold: undefined,
    label,
    disposed: parts.disposed,
  });
  recorder.forward(x, intake.view, n).catch((cause: unknown) => parts.internal(x, cause));
}

/** PB-05: a request after a playbook's last action; the playbook reports it (assertDone), whatever answers it. */
function exhausted(
  playbook: WorkerPlaybook,
  view: RequestView,
  label: string,
  seq: number,
): string {
  const text = playbook.exhausted(view, label);
  playbook.failed(text, seq);
  return text;
}

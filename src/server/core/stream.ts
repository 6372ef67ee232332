import type { ResponseCut, WireHttpResponse } from '../types.js';
import { cutNow } from './cut.js';
import type { Exchange } from './exchange.js';
import type { HoldOutcome, WorkerHold } from './holds.js';

/**
 * The writer of a chunked body — `sse` events or `chunks` — one `write()`
 * per piece after its gap (design §5.4–5.6). Every write respects
 * backpressure (`write()` false → wait for 'drain'), so a client that never
 * reads holds one socket buffer, not the body. It counts pieces, events and
 * bytes; a hold with `afterEvents` pauses it after that piece's write
 * callback; a cut stops it after N pieces or N bytes (the piece that crosses
 * N is split: only its first bytes go).
 */

/** What ends a held stream that is not released: posted by serve.ts. */
export type HeldEnd = (
  x: Exchange,
  outcome: Exclude<HoldOutcome, { kind: 'released' }>,
) => Promise<void>;

export async function writeStream(
  x: Exchange,
  response: WireHttpResponse,
  heldEnd: HeldEnd,
): Promise<void> {
  let { pieces, gaps, cut } = response;
  let sse = response.kind === 'sse';
  /** Where the current piece list (and its cut) starts: a release() may replace the rest. */
  let base = { pieces: 0, bytes: 0 };
  let hold = x.hold?.afterEvents !== undefined ? x.hold : undefined;
  x.hold = undefined;
  for (let i = 0; ; i++) {
    if (hold && (x.pieces >= (hold.afterEvents as number) || i === pieces.length)) {
      const held = hold;
      hold = undefined;
      if (!(await x.flushed())) return;
      const outcome = await pause(x, held);
      if (x.closed) return;
      if (outcome.kind !== 'released') return heldEnd(x, outcome);
      if (outcome.response) {
        x.replaced = true;
        ({ pieces, gaps, cut } = outcome.response);
        sse = outcome.response.kind === 'sse';
        base = { pieces: x.pieces, bytes: x.bytesSent };
        i = 0;
      }
    }
    if (cutByEvents(cut, x.pieces - base.pieces) || (cut && i === pieces.length)) {
      return cutNow(x, (cut as ResponseCut).how);
    }
    if (i === pieces.length) {
      x.end('complete');
      x.endWith(undefined);
      return;
    }
    const gap = gaps[i] ?? 0;
    if (gap > 0 && !(await x.wait(gap))) return;
    let piece = pieces[i] as Uint8Array;
    if (cut?.afterBytes !== undefined) {
      const room = base.bytes + cut.afterBytes - x.bytesSent;
      if (piece.length > room) {
        piece = piece.subarray(0, Math.max(0, room));
        x.bytesSent += piece.length;
        x.end('cut');
        if (piece.length > 0) x.write(piece);
        return cutNow(x, cut.how);
      }
    }
    x.bytesSent += piece.length;
    x.pieces++;
    if (sse) x.events++;
    x.progress();
    if (piece.length === 0) continue;
    if (!x.write(piece, sse ? 1 : 0) && !(await x.drain())) return;
  }
}

function cutByEvents(cut: ResponseCut | undefined, written: number): boolean {
  return cut?.afterEvents !== undefined && written >= cut.afterEvents;
}

/**
 * Pause `x` at `hold` (`fixed`: why a replacement cannot follow there);
 * `pausedAt` says so meanwhile, and stays when `dispose()` ended the hold
 * (its entry then says the connection was closed while held).
 */
export async function pause(x: Exchange, hold: WorkerHold, fixed?: string): Promise<HoldOutcome> {
  x.pausedAt = hold.id;
  const outcome = await hold.block(x.log, x.timeoutMs, fixed);
  if (outcome.kind !== 'ended' || outcome.why !== 'dispose') x.pausedAt = undefined;
  return outcome;
}

import type { Rule, Way } from './faults.js';
import { FramePump, type PumpContext } from './frame-pump.js';
import type { Outbox } from './outbox.js';
import { type Cursor, SplitError, type Splitter } from './splitter.js';

interface Current {
  frame: number;
  rule: Rule | undefined;
  /** Cut out whole (a fault targets it, or a reordered frame waits for it); else it streams through. */
  capture: boolean;
  /** Its bytes so far: all of them when captured; with `record`, the first `keepLimit` of a frame that streams. */
  parts: Buffer[];
  kept: number;
  /** Its bytes so far (all, also those not kept). */
  bytes: number;
}

/** Bytes of a streaming frame `record` keeps: the body it asks for, after a header block as long as content-length allows. */
const HEADER_ROOM = 16 * 1024 + 4;

/**
 * @internal One direction of one connection, for the framings found by
 * looking at the bytes (lines, content-length, raw, custom). As with length
 * prefixes, untouched bytes go out in the chunks they arrived in, a frame
 * nothing targets streams through as it arrives (a long line is not held
 * back until its newline), and only a frame a fault targets is cut out
 * whole. Its number is known from its first byte, so it never leaks early.
 */
export class SplitPump extends FramePump {
  #frame = 0;
  #current: Current | undefined;
  readonly #cursor: Cursor;
  readonly #skipped = { frames: 0 };

  constructor(
    way: Way,
    out: Outbox,
    private readonly splitter: Splitter,
    ctx: PumpContext,
  ) {
    super(way, out, ctx);
    this.#cursor = splitter.cursor(ctx.maxFrameBytes);
    this.reserved = splitter.reserved;
    this.readsAs = splitter.readsAs;
  }

  holdsChunks(): boolean {
    return (this.#current?.parts.length ?? 0) > 0 || this.held !== undefined;
  }

  protected encode(body: Buffer): Buffer {
    return this.splitter.encode(body);
  }

  protected resizeHeader(header: Buffer, length: number): Buffer {
    return this.splitter.resizeHeader(header, length);
  }

  data(chunk: Buffer): void {
    if (this.stopped) return;
    const len = chunk.length;
    const hits = this.ctx.mayHit(this.way);
    const report = this.ctx.onFrame;
    const recording = this.ctx.record !== undefined;
    const cursor = this.#cursor;
    cursor.chunk(chunk);
    const keepLimit = recording ? this.ctx.recordBytes + HEADER_ROOM : 0;
    let pos = 0;
    let seg = 0; // start of the untouched bytes not yet forwarded
    let done = 0; // frames that end in [seg, pos)
    while (pos < len) {
      let current = this.#current;
      if (!current) {
        if (!hits && !report && !this.held && !recording) {
          // Fast path: step over whole frames that nothing targets.
          const from = pos;
          pos = cursor.skip(chunk, pos, this.#skipped);
          if (pos > from) {
            this.#frame += this.#skipped.frames;
            done += this.#skipped.frames;
          }
          if (pos >= len) break;
        }
        const frame = ++this.#frame;
        const rule = hits ? this.ctx.match(this.way, frame) : undefined;
        const capture = rule !== undefined || this.held !== undefined;
        if (capture) {
          this.#forward(chunk, seg, pos, done);
          done = 0;
          seg = pos;
        }
        current = { frame, rule, capture, parts: [], kept: 0, bytes: 0 };
        this.#current = current;
      }
      let end: number;
      try {
        end = cursor.end(chunk, pos);
      } catch (error) {
        if (!(error instanceof SplitError)) throw error;
        // The whole frames before this one go out; nothing of this one more.
        if (!current.capture) this.#forward(chunk, seg, pos, done);
        this.stopped = true;
        if (error.reason !== undefined) this.ctx.malformed(this.way, current.frame, error.reason);
        else this.ctx.tooLarge(this.way, current.frame, error.length ?? 0, error.atLeast);
        return;
      }
      const to = end < 0 ? len : end;
      if (to > pos) {
        if (current.capture) current.parts.push(chunk.subarray(pos, to));
        else if (current.kept < keepLimit) {
          const piece = chunk.subarray(pos, Math.min(to, pos + keepLimit - current.kept));
          current.parts.push(piece);
          current.kept += piece.length;
        }
        current.bytes += to - pos;
      }
      pos = to;
      if (end < 0) break;
      this.#current = undefined;
      if (current.capture) {
        seg = pos;
        const wire =
          current.parts.length === 1 ? (current.parts[0] as Buffer) : Buffer.concat(current.parts);
        try {
          this.apply({
            frame: current.frame,
            rule: current.rule,
            wire,
            body: cursor.body(wire),
            span: cursor.span(wire),
          });
        } catch (error) {
          // A custom framer's encode() failed while a fault rebuilt its frame.
          if (!(error instanceof SplitError) || error.reason === undefined) throw error;
          this.stopped = true;
          this.ctx.malformed(this.way, current.frame, error.reason);
          return;
        }
        if (this.stopped) return;
      } else {
        done += 1;
        report?.(this.way, current.frame, cursor.bodyLength);
        if (recording) {
          const start = Buffer.concat(current.parts, current.kept);
          const body = current.kept === current.bytes ? cursor.body(start) : cursor.bodyFrom(start);
          this.ctx.record?.(this.way, current.frame, body, cursor.bodyLength, undefined);
        }
      }
    }
    if (!this.#current?.capture) this.#forward(chunk, seg, len, done);
  }

  /**
   * The source ended its write side: a reordered frame still held goes out
   * (no frame came after it), then what arrived of a frame the source cut
   * short, as it came (see `cutShort()`), then the destination is ended.
   */
  end(): void {
    if (this.stopped) return;
    this.releaseHeld();
    const current = this.#current;
    if (current) {
      this.#current = undefined;
      // All its bytes when captured; else they streamed through, and `record` kept their start.
      const start = Buffer.concat(current.parts);
      const { body, arrived, length } = this.#cursor.cutShort(start, current.bytes);
      const wire = current.capture ? start : undefined;
      this.cutShort({ frame: current.frame, rule: current.rule, wire, body, arrived, length });
    }
    this.out.end();
  }

  #forward(chunk: Buffer, from: number, to: number, frames: number): void {
    if (to > from)
      this.out.push(from === 0 && to === chunk.length ? chunk : chunk.subarray(from, to), frames);
  }
}

import type { Rule, Way } from './faults.js';
import { FramePump, type PumpContext } from './frame-pump.js';
import type { LengthPrefix } from './length-prefix.js';
import type { Outbox } from './outbox.js';

interface Capture {
  frame: number;
  rule: Rule | undefined; // undefined: captured only to release a reordered frame after it
  header: Buffer;
  parts: Buffer[];
  length: number;
}

/**
 * @internal One direction of one connection: reads chunks, tracks frame boundaries by
 * reading headers only, and forwards untouched bytes in the chunks they
 * arrived in. Only a frame that a fault targets is cut out, gathered whole
 * and acted on. A partial header at the end of a chunk is held back until the
 * frame's number is known, so a targeted frame never leaks a byte early.
 */
export class Pump extends FramePump {
  #frame = 0;
  #header = Buffer.alloc(8);
  #headerHave = 0;
  #bodyLeft = 0;
  #inBody = false;
  #bodyLength = 0;
  #capture: Capture | undefined;
  /** With `record`: the start of the body under way, of a frame that streams through. */
  #kept: Buffer[] = [];
  #keptBytes = 0;
  readonly #skipped = { frames: 0 };

  constructor(
    way: Way,
    out: Outbox,
    private readonly framing: LengthPrefix,
    ctx: PumpContext,
  ) {
    super(way, out, ctx);
  }

  holdsChunks(): boolean {
    return this.#capture !== undefined || this.#keptBytes > 0 || this.held !== undefined;
  }

  protected encode(body: Buffer): Buffer {
    return Buffer.concat([this.framing.write(body.length), body]);
  }

  protected resizeHeader(_header: Buffer, length: number): Buffer {
    return this.framing.write(length);
  }

  /** Keep what `record` needs of a body that streams through: its first `recordBytes`. */
  #keep(piece: Buffer): void {
    const room = this.ctx.recordBytes - this.#keptBytes;
    if (room <= 0) return;
    const part = piece.length > room ? piece.subarray(0, room) : piece;
    this.#kept.push(part);
    this.#keptBytes += part.length;
  }

  #recordKept(frame: number, length: number): void {
    const body = Buffer.concat(this.#kept, this.#keptBytes);
    this.#kept = [];
    this.#keptBytes = 0;
    this.ctx.record?.(this.way, frame, body, length, undefined);
  }

  data(chunk: Buffer): void {
    if (this.stopped) return;
    const size = this.framing.headerBytes;
    const len = chunk.length;
    // Looked up once a chunk, not once a frame: this loop is the hot path.
    const hits = this.ctx.mayHit(this.way);
    const report = this.ctx.onFrame;
    const recording = this.ctx.record !== undefined;
    const max = this.ctx.maxFrameBytes;
    const untouched = !hits && !report && !this.held && !recording;
    let pos = 0;
    let seg = 0; // start of the untouched bytes not yet forwarded
    let done = 0; // whole frames in [seg, pos)
    while (pos < len) {
      if (untouched && !this.#inBody && this.#headerHave === 0) {
        // Fast path: step over whole frames that nothing targets, reading only headers.
        const from = pos;
        pos = this.framing.skip(chunk, pos, max, this.#skipped);
        if (pos > from) {
          this.#frame += this.#skipped.frames;
          done += this.#skipped.frames;
        }
        if (pos >= len) break;
      }
      if (!this.#inBody) {
        let length: number;
        let start: number; // where this chunk's part of the header begins
        let earlier = 0; // header bytes held back from earlier chunks
        if (this.#headerHave === 0 && len - pos >= size) {
          length = this.framing.read(chunk, pos);
          start = pos;
          pos += size;
        } else {
          earlier = this.#headerHave;
          const n = Math.min(size - earlier, len - pos);
          chunk.copy(this.#header, earlier, pos, pos + n);
          this.#headerHave += n;
          start = pos;
          pos += n;
          if (this.#headerHave < size) {
            this.#forward(chunk, seg, start, done);
            return; // hold the partial header back
          }
          length = this.framing.read(this.#header, 0);
        }
        this.#headerHave = 0;
        const frame = ++this.#frame;
        if (length > max) {
          this.#forward(chunk, seg, start, done);
          this.stopped = true;
          this.ctx.tooLarge(this.way, frame, length);
          return;
        }
        const rule = hits ? this.ctx.match(this.way, frame) : undefined;
        if (rule || this.held) {
          this.#forward(chunk, seg, start, done);
          done = 0;
          const header = Buffer.allocUnsafe(size);
          if (earlier > 0) this.#header.copy(header, 0, 0, size);
          else chunk.copy(header, 0, start, start + size);
          this.#capture = { frame, rule, header, parts: [], length };
        } else if (earlier > 0) {
          // The header straddled chunks: its held-back bytes go out first.
          this.#forward(chunk, seg, start, done);
          done = 0;
          this.out.push(Buffer.from(this.#header.subarray(0, earlier)), 0);
          seg = start;
        }
        this.#bodyLength = length;
        this.#bodyLeft = length;
        this.#inBody = true;
      } else {
        const take = Math.min(this.#bodyLeft, len - pos);
        if (this.#capture) this.#capture.parts.push(chunk.subarray(pos, pos + take));
        else if (recording) this.#keep(chunk.subarray(pos, pos + take));
        pos += take;
        this.#bodyLeft -= take;
      }
      if (this.#inBody && this.#bodyLeft === 0) {
        this.#inBody = false;
        const capture = this.#capture;
        if (capture) {
          this.#capture = undefined;
          seg = pos;
          const wire = Buffer.concat(
            [capture.header, ...capture.parts],
            capture.header.length + capture.length,
          );
          const size = capture.header.length;
          this.apply({
            frame: capture.frame,
            rule: capture.rule,
            wire,
            body: wire.subarray(size),
            span: [size, wire.length],
          });
          if (this.stopped) return;
        } else {
          done += 1;
          report?.(this.way, this.#frame, this.#bodyLength);
          if (recording) this.#recordKept(this.#frame, this.#bodyLength);
        }
      }
    }
    if (!this.#capture) this.#forward(chunk, seg, len, done);
  }

  /**
   * The source ended its write side: a reordered frame still held goes out
   * (no frame came after it), then what arrived of a frame the source cut
   * short, as it came (see `cutShort()`), then the destination is ended.
   */
  end(): void {
    if (this.stopped) return;
    this.releaseHeld();
    this.#cutShort();
    this.out.end();
  }

  /** The frame under way when the source ended, if any: its bytes not yet forwarded go on, or are dropped. */
  #cutShort(): void {
    const capture = this.#capture;
    if (capture) {
      this.#capture = undefined;
      const body = Buffer.concat(capture.parts);
      const wire = Buffer.concat([capture.header, body]);
      this.cutShort({
        frame: capture.frame,
        rule: capture.rule,
        wire,
        body,
        arrived: body.length,
        length: capture.length,
      });
    } else if (this.#inBody) {
      // It streamed through: its bytes are out already; `record` kept its start.
      const body = Buffer.concat(this.#kept, this.#keptBytes);
      this.#kept = [];
      this.#keptBytes = 0;
      this.cutShort({
        frame: this.#frame,
        rule: undefined,
        wire: undefined,
        body,
        arrived: this.#bodyLength - this.#bodyLeft,
        length: this.#bodyLength,
      });
    } else if (this.#headerHave > 0) {
      // Held back until the frame's number was known: it never was, until now.
      const frame = ++this.#frame;
      const rule = this.ctx.mayHit(this.way) ? this.ctx.match(this.way, frame) : undefined;
      const wire = Buffer.from(this.#header.subarray(0, this.#headerHave));
      this.#headerHave = 0;
      this.cutShort({ frame, rule, wire, body: Buffer.alloc(0), arrived: 0, length: 0 });
    }
    this.#inBody = false;
  }

  #forward(chunk: Buffer, from: number, to: number, frames: number): void {
    if (to > from)
      this.out.push(from === 0 && to === chunk.length ? chunk : chunk.subarray(from, to), frames);
  }
}

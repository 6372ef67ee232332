import { describeValue } from '../internal/describe.js';
import { InvalidOptionError } from '../internal/errors.js';
import { checkOptionKeys } from '../internal/options.js';
import { checkMaxFrameBytes } from '../internal/wire/settings.js';
import { FrameDecodeError } from './errors.js';
import { type Framing, resolveFraming, type Wire } from './framing.js';
import type { LengthPrefix } from './length-prefix.js';
import { type Cursor, type Framer, SplitError } from './splitter.js';

export interface FrameDecoderOptions {
  /**
   * How frames are delimited: `'u32be'` is a 4-byte big-endian length, then the body
   * (`'u32le'`, `'u16be'`, `'lines'`, `'content-length'`, `'raw'`: see `Framing`),
   * or a `Framer` of your own.
   * @default 'u32be'
   */
  framing?: Framing | Framer;
  /**
   * A header declaring more (or a line running longer) stops decoding with a
   * `FrameDecodeError` (the stream is out of step, or the peer speaks another
   * framing). Does not apply to `'raw'`.
   * @default 67108864 (64 MiB)
   */
  maxFrameBytes?: number;
}

/**
 * Splits a byte stream into frames: the counterpart of `encodeFrame()`, for a
 * client or server of your own. Feed it chunks as they arrive, however they
 * are cut; it returns the bodies of the frames they complete.
 *
 * @example
 * const decoder = new FrameDecoder();
 * socket.on('data', (chunk) => {
 *   for (const body of decoder.push(chunk)) handle(body);
 * });
 */
export class FrameDecoder {
  readonly #framing: Wire;
  readonly #max: number;
  /** For the framings found by looking at the bytes (lines, content-length, raw, custom). */
  readonly #cursor: Cursor | undefined;
  /** Bytes received and not yet returned, in arrival order (a partial frame, header included). */
  #chunks: Buffer[] = [];
  #buffered = 0;
  /** The body length of the frame at the front, once its header is in. */
  #length: number | undefined;
  #decoded = 0;
  #failed: FrameDecodeError | undefined;

  constructor(options: FrameDecoderOptions = {}) {
    checkOptionKeys(options, ['framing', 'maxFrameBytes'], 'new FrameDecoder()');
    this.#framing = resolveFraming(options.framing, 'the `framing` option of new FrameDecoder()');
    this.#max = checkMaxFrameBytes(options.maxFrameBytes, this.#framing, 'new FrameDecoder()');
    this.#cursor = this.#framing.kind === 'split' ? this.#framing.cursor(this.#max) : undefined;
  }

  /**
   * Add bytes; return the bodies of the frames they complete, in order (each
   * its own copy). Throws a `FrameDecodeError` on a header over
   * `maxFrameBytes`, and again on every later call.
   */
  push(chunk: Uint8Array): Buffer[] {
    if (this.#failed) throw this.#failed;
    if (!(chunk instanceof Uint8Array)) {
      throw new InvalidOptionError(
        `Expected the chunk passed to FrameDecoder.push() to be a Buffer or a Uint8Array, got ${describeValue(chunk)}.`,
      );
    }
    if (chunk.length > 0) {
      this.#chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      this.#buffered += chunk.length;
    }
    const frames: Buffer[] = [];
    try {
      if (this.#cursor) {
        if (chunk.length > 0) this.#splitDelimited(this.#cursor, frames);
      } else this.#split(frames);
    } finally {
      // What is left of `chunk` is the last buffered piece: copy it, so the caller may reuse `chunk`.
      const last = this.#chunks.length - 1;
      if (chunk.length > 0 && last >= 0) {
        this.#chunks[last] = Buffer.from(this.#chunks[last] as Buffer);
      }
    }
    return frames;
  }

  /**
   * The framings found by looking at the bytes: the newest chunk is the last
   * buffered piece; whatever comes before it is the frame under way.
   */
  #splitDelimited(cursor: Cursor, frames: Buffer[]): void {
    const chunk = this.#chunks.pop();
    if (!chunk) return;
    this.#buffered -= chunk.length;
    cursor.chunk(chunk);
    let pos = 0;
    while (pos < chunk.length) {
      let end: number;
      try {
        end = cursor.end(chunk, pos);
      } catch (error) {
        if (!(error instanceof SplitError)) throw error;
        this.#chunks.push(chunk.subarray(pos));
        this.#buffered += chunk.length - pos;
        this.#failed = new FrameDecodeError({
          frame: this.#decoded + 1,
          declaredLength: error.length,
          atLeast: error.atLeast,
          maxFrameBytes: this.#max,
          reason: error.reason,
          framing: this.#framing.name,
        });
        throw this.#failed;
      }
      const to = end < 0 ? chunk.length : end;
      this.#chunks.push(chunk.subarray(pos, to));
      this.#buffered += to - pos;
      pos = to;
      if (end < 0) return;
      const wire = this.#take(this.#buffered);
      frames.push(Buffer.from(cursor.body(wire)));
      this.#decoded += 1;
    }
  }

  #split(frames: Buffer[]): void {
    const framing = this.#framing as LengthPrefix;
    const size = framing.headerBytes;
    for (;;) {
      if (this.#length === undefined) {
        if (this.#buffered < size) return;
        const length = framing.read(this.#peek(size), 0);
        if (length > this.#max) {
          this.#failed = new FrameDecodeError({
            frame: this.#decoded + 1,
            declaredLength: length,
            maxFrameBytes: this.#max,
          });
          throw this.#failed;
        }
        this.#length = length;
      }
      if (this.#buffered < size + this.#length) return;
      this.#drop(size);
      frames.push(this.#take(this.#length));
      this.#length = undefined;
      this.#decoded += 1;
    }
  }

  /** Bytes received that do not complete a frame yet (a partial header, or a header and part of a body). */
  get buffered(): number {
    return this.#buffered;
  }

  /** The body length the unfinished frame's header declares, once that header has arrived. */
  get declaredLength(): number | undefined {
    return this.#cursor ? this.#cursor.declared : this.#length;
  }

  /** Frames returned so far. */
  get decoded(): number {
    return this.#decoded;
  }

  /** A copy of the bytes that do not complete a frame yet, header included. */
  rest(): Buffer {
    return Buffer.concat(this.#chunks, this.#buffered);
  }

  /** The first `n` buffered bytes (n <= buffered), without removing them. */
  #peek(n: number): Buffer {
    const head = this.#chunks[0] as Buffer;
    if (head.length >= n) return head;
    const out = Buffer.allocUnsafe(n);
    let at = 0;
    for (const chunk of this.#chunks) {
      at += chunk.copy(out, at, 0, Math.min(chunk.length, n - at));
      if (at === n) break;
    }
    return out;
  }

  #drop(n: number): void {
    this.#buffered -= n;
    while (n > 0) {
      const head = this.#chunks[0] as Buffer;
      if (head.length <= n) {
        this.#chunks.shift();
        n -= head.length;
      } else {
        this.#chunks[0] = head.subarray(n);
        n = 0;
      }
    }
  }

  /** Remove the first `n` buffered bytes and return them as a new Buffer. */
  #take(n: number): Buffer {
    const parts: Buffer[] = [];
    let left = n;
    while (left > 0) {
      const head = this.#chunks[0] as Buffer;
      if (head.length <= left) {
        parts.push(head);
        this.#chunks.shift();
        left -= head.length;
      } else {
        parts.push(head.subarray(0, left));
        this.#chunks[0] = head.subarray(left);
        left = 0;
      }
    }
    this.#buffered -= n;
    return Buffer.concat(parts, n);
  }
}

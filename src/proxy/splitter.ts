/**
 * A framing of your own, for `framing` options: `decode` splits the bytes
 * buffered so far into whole frames and what is left over, `encode` turns a
 * frame back into its bytes. `encode(frame)` must give back exactly the bytes
 * `decode` read for that frame: that is how the proxy knows where each frame
 * starts and ends in the stream, and how it rebuilds a frame a fault changed.
 *
 * @example
 * // A 1-byte length, then the body.
 * const tiny: Framer = {
 *   name: 'u8',
 *   decode(buffer) {
 *     const frames: Buffer[] = [];
 *     let at = 0;
 *     while (at < buffer.length && at + 1 + (buffer[at] as number) <= buffer.length) {
 *       frames.push(buffer.subarray(at + 1, at + 1 + (buffer[at] as number)));
 *       at += 1 + (buffer[at] as number);
 *     }
 *     return { frames, rest: buffer.subarray(at) };
 *   },
 *   encode: (frame) => Buffer.concat([Buffer.from([frame.length]), frame]),
 * };
 */
export interface Framer {
  /** Shown in messages and in the timeline. @default 'custom' */
  name?: string;
  /** Whole frames at the start of `buffer` (their bodies, in order), and the bytes after them. */
  decode(buffer: Buffer): { frames: Uint8Array[]; rest: Uint8Array };
  /** The bytes of one frame on the wire. */
  encode(frame: Buffer): Uint8Array;
}

/**
 * @internal Thrown by a cursor when the stream cannot be split any further:
 * a frame over `maxFrameBytes` (`length` says how long, `atLeast` when its
 * end is not in yet), or bytes that are not this framing (`reason`).
 */
export class SplitError extends Error {
  constructor(
    readonly reason: string | undefined,
    readonly length?: number,
    readonly atLeast = false,
  ) {
    super(reason ?? `a frame of ${length} bytes`);
  }
}

/**
 * @internal Follows frame boundaries through one stream, chunk by chunk. A
 * frame may span any number of chunks; the cursor keeps only what it needs
 * to find the frame's end (a partial `Content-Length` header, a custom
 * framer's unread bytes), never the frames it steps over.
 */
export interface Cursor {
  /** A new chunk arrives: called once for each, before `skip()` or `end()` look at it. */
  chunk(chunk: Buffer): void;
  /**
   * Where the frame under way (or starting at `pos`) ends in `chunk`
   * (exclusive), or -1 when it goes on past the chunk. Throws a SplitError.
   */
  end(chunk: Buffer, pos: number): number;
  /**
   * With no frame under way: step over the whole frames from `pos` (none
   * over the limit), return where the next one starts, and put how many in
   * `out.frames`. May step over none; `end()` then takes over.
   */
  skip(chunk: Buffer, pos: number, out: { frames: number }): number;
  /** The body length of the frame that `end()` last completed. */
  readonly bodyLength: number;
  /** The body length the frame under way declares, once its header is in. */
  readonly declared: number | undefined;
  /** The body of the frame that `end()` last completed, given its bytes. */
  body(wire: Buffer): Buffer;
  /** The start of that body, given the frame's first bytes only (its end cut off). */
  bodyFrom(start: Buffer): Buffer;
  /** Where that body lies in its bytes, or undefined when only `encode()` can rebuild it (custom framers). */
  span(wire: Buffer): [number, number] | undefined;
  /**
   * The frame under way was cut short by the end of the stream after
   * `bytes` bytes, of which `start` holds the first (all of them when it was
   * cut out, else as many as `record` kept): what arrived of its body.
   */
  cutShort(start: Buffer, bytes: number): CutShortBody;
}

/** @internal What arrived of a frame cut short: its body's start, its body bytes, the length it declares (or `arrived`). */
export interface CutShortBody {
  body: Buffer;
  arrived: number;
  length: number;
}

/** @internal A framing that finds frame ends by looking at the bytes: lines, content-length, raw, custom. */
export interface Splitter {
  readonly kind: 'split';
  readonly name: string;
  /** The largest `maxFrameBytes` accepted. */
  readonly maxLength: number;
  /** Whether `maxFrameBytes` applies (raw chunks are as long as the reads that made them). */
  readonly limited: boolean;
  cursor(max: number): Cursor;
  /** The bytes of one frame with this body (throws an InvalidOptionError for a body it cannot carry). */
  encode(body: Buffer): Buffer;
  /** Byte values a `corrupt` fault must not produce in a body: they would end the frame early. */
  readonly reserved: ReadonlySet<number> | undefined;
  /** The bytes before a body (as `span` gives them), saying `length` instead (`truncate`). */
  resizeHeader(header: Buffer, length: number): Buffer;
  /** Whether `wire` reads back as exactly one frame with this body (custom framers: `corrupt` checks its flips). */
  readsAs?(wire: Buffer, body: Buffer): boolean;
  /** User code sees the bytes read (custom framers), and may keep them: each read gets a buffer of its own. */
  readonly userCodeSeesReads?: boolean;
}

import { describeValue } from '../internal/describe.js';
import { InvalidOptionError } from '../internal/errors.js';

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
}

const NEWLINE = 10;
const CR = 13;

class LineCursor implements Cursor {
  bodyLength = 0;
  readonly declared = undefined;

  chunk(): void {}
  #seen = 0; // bytes of the line under way in earlier chunks
  #lastCR = false;

  constructor(private readonly max: number) {}

  end(chunk: Buffer, pos: number): number {
    const at = chunk.indexOf(NEWLINE, pos);
    if (at < 0) {
      if (chunk.length > pos) {
        this.#seen += chunk.length - pos;
        this.#lastCR = chunk[chunk.length - 1] === CR;
      }
      if (this.#seen > this.max + 1) throw new SplitError(undefined, this.#seen, true);
      return -1;
    }
    const cr = at > pos ? chunk[at - 1] === CR : this.#seen > 0 && this.#lastCR;
    this.bodyLength = this.#seen + (at - pos) - (cr ? 1 : 0);
    this.#seen = 0;
    this.#lastCR = false;
    if (this.bodyLength > this.max) throw new SplitError(undefined, this.bodyLength);
    return at + 1;
  }

  skip(chunk: Buffer, pos: number, out: { frames: number }): number {
    const max = this.max;
    let frames = 0;
    for (;;) {
      const at = chunk.indexOf(NEWLINE, pos);
      if (at < 0 || at - pos > max) break; // over the limit (or just at it, with a CR): end() decides
      pos = at + 1;
      frames += 1;
    }
    out.frames = frames;
    return pos;
  }

  body(wire: Buffer): Buffer {
    return wire.subarray(0, wire.length - lineEnding(wire));
  }

  bodyFrom(start: Buffer): Buffer {
    return start;
  }

  span(wire: Buffer): [number, number] {
    return [0, wire.length - lineEnding(wire)];
  }
}

/** 2 for a line that ends in CR LF, 1 for LF. */
function lineEnding(wire: Buffer): number {
  return wire.length >= 2 && wire[wire.length - 2] === CR ? 2 : 1;
}

/** @internal `lines`: one frame per line (LF or CR LF), as NDJSON and JSON-RPC over stdio use. */
export const lines: Splitter = {
  kind: 'split',
  name: 'lines',
  maxLength: Number.MAX_SAFE_INTEGER,
  limited: true,
  reserved: new Set([NEWLINE, CR]),
  cursor: (max) => new LineCursor(max),
  resizeHeader: (header) => header,
  encode: (body) => {
    if (body.includes(NEWLINE)) {
      throw new InvalidOptionError(
        `A lines frame cannot hold a newline (byte 10 at offset ${body.indexOf(NEWLINE)}): it would be read as two frames. Escape it (JSON.stringify does), or use another framing.`,
      );
    }
    return Buffer.concat([body, Buffer.from([NEWLINE])], body.length + 1);
  },
};

/** The longest header block read before giving up on finding its blank line. */
const HEADER_LIMIT = 16 * 1024;
const BLANK_LINE = Buffer.from('\r\n\r\n');

class ContentLengthCursor implements Cursor {
  bodyLength = 0;
  declared: number | undefined;

  chunk(): void {}
  #head: Buffer | undefined; // a header block that is not complete yet
  #left = -1; // body bytes still to come; -1 while in the header

  constructor(private readonly max: number) {}

  end(chunk: Buffer, pos: number): number {
    const len = chunk.length;
    if (this.#left < 0) {
      const head = this.#head;
      const scan = head
        ? Buffer.concat([head, chunk.subarray(pos, Math.min(len, pos + HEADER_LIMIT))])
        : chunk.subarray(pos);
      const at = scan.indexOf(BLANK_LINE, head ? Math.max(0, head.length - 3) : 0);
      if (at < 0 || at > HEADER_LIMIT) {
        if (at > HEADER_LIMIT || scan.length > HEADER_LIMIT + 3) throw headerTooLong(scan);
        this.#head = Buffer.from(scan);
        return -1;
      }
      const length = contentLength(scan.subarray(0, at));
      if (length > this.max) throw new SplitError(undefined, length);
      this.declared = length;
      this.#left = length;
      this.#head = undefined;
      pos += at + 4 - (head?.length ?? 0);
    }
    const take = Math.min(this.#left, len - pos);
    this.#left -= take;
    if (this.#left > 0) return -1;
    this.bodyLength = this.declared as number;
    this.declared = undefined;
    this.#left = -1;
    return pos + take;
  }

  skip(chunk: Buffer, pos: number, out: { frames: number }): number {
    const len = chunk.length;
    let frames = 0;
    for (;;) {
      const at = chunk.indexOf(BLANK_LINE, pos);
      if (at < 0 || at - pos > HEADER_LIMIT) break;
      let length: number;
      try {
        length = contentLength(chunk.subarray(pos, at));
      } catch {
        break; // end() reports it
      }
      const frameEnd = at + 4 + length;
      if (length > this.max || frameEnd > len) break;
      pos = frameEnd;
      frames += 1;
    }
    out.frames = frames;
    return pos;
  }

  body(wire: Buffer): Buffer {
    return wire.subarray(wire.indexOf(BLANK_LINE) + 4);
  }

  bodyFrom(start: Buffer): Buffer {
    const at = start.indexOf(BLANK_LINE);
    return at < 0 ? Buffer.alloc(0) : start.subarray(at + 4);
  }

  span(wire: Buffer): [number, number] {
    return [wire.indexOf(BLANK_LINE) + 4, wire.length];
  }
}

function headerTooLong(scan: Buffer): SplitError {
  return new SplitError(
    `no blank line (CR LF CR LF) within the first ${HEADER_LIMIT} bytes of a header block that starts ${JSON.stringify(scan.subarray(0, 40).toString('latin1'))}`,
  );
}

const CONTENT_LENGTH = /^content-length[ \t]*:[ \t]*(\d{1,16})[ \t]*$/i;

/** The body length a header block (without its blank line) declares. */
function contentLength(head: Buffer): number {
  let length: number | undefined;
  const text = head.toString('latin1');
  for (const line of text.split('\r\n')) {
    const match = CONTENT_LENGTH.exec(line);
    if (!match) continue;
    const value = Number(match[1]);
    if (length !== undefined && length !== value) {
      throw new SplitError(`two Content-Length headers that disagree (${length} and ${value})`);
    }
    length = value;
  }
  if (length === undefined) {
    throw new SplitError(
      `a header block without a Content-Length header: ${JSON.stringify(text.slice(0, 80))}`,
    );
  }
  return length;
}

/** @internal `content-length`: `Content-Length: N` header lines, a blank line, N bytes (LSP, DAP). */
export const contentLengthFraming: Splitter = {
  kind: 'split',
  name: 'content-length',
  maxLength: Number.MAX_SAFE_INTEGER,
  limited: true,
  reserved: undefined,
  cursor: (max) => new ContentLengthCursor(max),
  // The other headers stay as they came; only the length changes.
  resizeHeader: (header, length) =>
    Buffer.from(
      header.toString('latin1').replace(/(content-length[ \t]*:[ \t]*)\d+/gi, `$1${length}`),
      'latin1',
    ),
  encode: (body) => Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]),
};

class RawCursor implements Cursor {
  bodyLength = 0;
  readonly declared = undefined;

  chunk(): void {}

  end(chunk: Buffer, pos: number): number {
    this.bodyLength = chunk.length - pos;
    return chunk.length;
  }

  skip(chunk: Buffer, pos: number, out: { frames: number }): number {
    out.frames = pos < chunk.length ? 1 : 0;
    return chunk.length;
  }

  body(wire: Buffer): Buffer {
    return wire;
  }

  bodyFrom(start: Buffer): Buffer {
    return start;
  }

  span(wire: Buffer): [number, number] {
    return [0, wire.length];
  }
}

/** @internal `raw`: each chunk as it was read is a frame (no parsing at all). */
export const raw: Splitter = {
  kind: 'split',
  name: 'raw',
  maxLength: Number.MAX_SAFE_INTEGER,
  limited: false,
  reserved: undefined,
  cursor: () => new RawCursor(),
  resizeHeader: (header) => header,
  encode: (body) => body,
};

class CustomCursor implements Cursor {
  bodyLength = 0;
  readonly declared = undefined;
  #unread: Buffer = Buffer.alloc(0); // bytes not yet decoded into frames
  #known: Array<{ length: number; body: Buffer }> = []; // decoded, not yet stepped over
  #fresh = false; // a chunk arrived that decode() has not seen
  #seen = 0; // bytes of the frame under way in earlier calls
  #body: Buffer = Buffer.alloc(0);

  constructor(
    private readonly framer: Framer,
    private readonly name: string,
    private readonly max: number,
    private readonly encode: (body: Buffer) => Buffer,
  ) {}

  chunk(): void {
    this.#fresh = true;
  }

  end(chunk: Buffer, pos: number): number {
    if (this.#known.length === 0) {
      if (this.#fresh) {
        this.#fresh = false;
        this.#absorb(chunk.subarray(pos));
      }
      if (this.#known.length === 0) {
        this.#seen += chunk.length - pos;
        return -1;
      }
    }
    const next = this.#known.shift() as { length: number; body: Buffer };
    const end = pos + next.length - this.#seen;
    if (end > chunk.length || end < pos) {
      throw new SplitError(`the ${this.name} framer's frames are out of step with the stream`);
    }
    this.#seen = 0;
    this.#body = next.body;
    this.bodyLength = next.body.length;
    return end;
  }

  skip(_chunk: Buffer, pos: number, out: { frames: number }): number {
    out.frames = 0;
    return pos;
  }

  body(): Buffer {
    return this.#body;
  }

  bodyFrom(): Buffer {
    return this.#body;
  }

  span(): undefined {
    return undefined;
  }

  /**
   * Decode what is unread, again while decode() makes progress (a framer may
   * return one frame a call). Each call re-reads the frame under way: cheap for
   * frames of kilobytes, slow (quadratic) for frames of many megabytes.
   */
  #absorb(bytes: Buffer): void {
    let unread = this.#unread.length > 0 ? Buffer.concat([this.#unread, bytes]) : bytes;
    for (;;) {
      const { frames, rest } = this.#decode(unread);
      const read = unread.length - rest.length;
      let encoded = 0;
      for (const frame of frames) {
        const body = Buffer.from(frame);
        if (body.length > this.max) throw new SplitError(undefined, body.length);
        const length = this.encode(body).length;
        encoded += length;
        this.#known.push({ length, body });
      }
      if (encoded !== read) {
        throw new SplitError(
          `the ${this.name} framer's decode() read ${read} bytes for ${frames.length} frame(s), but encode() gives ${encoded} bytes for them; encode(frame) must give back the bytes decode() read`,
        );
      }
      unread = Buffer.from(rest);
      if (frames.length === 0 || read === 0 || unread.length === 0) break;
    }
    this.#unread = unread;
    if (this.#known.length === 0 && unread.length > this.max) {
      throw new SplitError(undefined, unread.length, true);
    }
  }

  #decode(unread: Buffer): { frames: Uint8Array[]; rest: Uint8Array } {
    const name = this.name;
    let result: { frames: Uint8Array[]; rest: Uint8Array };
    try {
      result = this.framer.decode(unread);
    } catch (error) {
      throw new SplitError(
        `the ${name} framer's decode() threw: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    const { frames, rest } = (result ?? {}) as Partial<typeof result>;
    if (!Array.isArray(frames) || !(rest instanceof Uint8Array)) {
      throw new SplitError(
        `the ${name} framer's decode() must return { frames: Buffer[], rest: Buffer }, got ${describeValue(result)}`,
      );
    }
    for (const frame of frames) {
      if (!(frame instanceof Uint8Array)) {
        throw new SplitError(
          `the ${name} framer's decode() returned a frame that is not a Buffer: ${describeValue(frame)}`,
        );
      }
    }
    return { frames, rest };
  }
}

/** @internal A splitter around a user's `Framer`; `what` names the option in messages. */
export function customSplitter(framer: Framer, what: string): Splitter {
  if (typeof framer.decode !== 'function' || typeof framer.encode !== 'function') {
    throw new InvalidOptionError(
      `Expected ${what} to be a framing name or a Framer { decode(buffer), encode(frame) }, got ${describeValue(framer)}.`,
    );
  }
  if (framer.name !== undefined && typeof framer.name !== 'string') {
    throw new InvalidOptionError(
      `Expected the \`name\` of the Framer passed as ${what} to be a string, got ${describeValue(framer.name)}.`,
    );
  }
  const name = framer.name ?? 'custom';
  /** `encode`, with what it may do wrong (throw, return something else) turned into a SplitError. */
  const encode = (body: Buffer): Buffer => {
    let bytes: unknown;
    try {
      bytes = framer.encode(body);
    } catch (error) {
      throw new SplitError(
        `the ${name} framer's encode() threw: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    if (!(bytes instanceof Uint8Array)) {
      throw new SplitError(
        `the ${name} framer's encode() must return a Buffer or a Uint8Array, got ${describeValue(bytes)}`,
      );
    }
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
  return {
    kind: 'split',
    name,
    maxLength: Number.MAX_SAFE_INTEGER,
    limited: true,
    reserved: undefined,
    cursor: (max) => new CustomCursor(framer, name, max, encode),
    resizeHeader: (header) => header, // unused: a custom frame has no span, encode() rebuilds it
    readsAs: (wire, body) => {
      try {
        const { frames, rest } = framer.decode(wire);
        return (
          frames.length === 1 &&
          rest.length === 0 &&
          Buffer.from(frames[0] as Uint8Array).equals(body)
        );
      } catch {
        return false;
      }
    },
    encode,
  };
}

import { type Cursor, type CutShortBody, SplitError, type Splitter } from './splitter.js';

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

  cutShort(start: Buffer, bytes: number): CutShortBody {
    const declared = this.declared;
    if (declared === undefined) return { body: Buffer.alloc(0), arrived: 0, length: 0 };
    const head = start.indexOf(BLANK_LINE) + 4; // in `start`: `record` keeps a whole header block
    return { body: start.subarray(head), arrived: bytes - head, length: declared };
  }
}

function headerTooLong(scan: Buffer): SplitError {
  const bare = scan.subarray(0, HEADER_LIMIT + 3).indexOf('\n\n');
  const hint =
    bare < 0
      ? ''
      : `; it has a blank line of bare LFs (LF LF) at byte ${bare}: this framing needs CR LF line ends`;
  return new SplitError(
    `no blank line (CR LF CR LF) within the first ${HEADER_LIMIT} bytes of a header block that starts ${JSON.stringify(scan.subarray(0, 40).toString('latin1'))}${hint}`,
  );
}

/** A `Content-Length` header line (the name whole, in any case): its value, spaces around it trimmed. */
const CONTENT_LENGTH = /^content-length[ \t]*:[ \t]*(.*?)[ \t]*$/i;
const DECIMAL = /^\d{1,16}$/;

/** The body length a header block (without its blank line) declares. */
function contentLength(head: Buffer): number {
  let length: number | undefined;
  const text = head.toString('latin1');
  for (const line of text.split('\r\n')) {
    const match = CONTENT_LENGTH.exec(line);
    if (!match) continue;
    const text = match[1] as string;
    if (!DECIMAL.test(text)) {
      throw new SplitError(
        `a Content-Length value ${JSON.stringify(text)} that is not a decimal length (1 to 16 digits, nothing else)`,
      );
    }
    const value = Number(text);
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
  // The other headers stay as they came (X-Original-Content-Length too); only the length changes.
  resizeHeader: (header, length) =>
    Buffer.from(
      header
        .toString('latin1')
        .replace(/(^|\r\n)(content-length[ \t]*:[ \t]*)\d+/gi, `$1$2${length}`),
      'latin1',
    ),
  encode: (body) => Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]),
};

import { StringDecoder } from 'node:string_decoder';

/**
 * The last `limit` bytes of a stream, in a fixed ring: memory stays at
 * `limit` bytes however much the process writes, and the count of bytes that
 * fell out of the front is exact.
 */
export class ByteTail {
  readonly limit: number;
  #ring: Buffer | undefined; // allocated on the first byte
  #start = 0; // index of the oldest kept byte
  #length = 0;
  #total = 0;

  constructor(limit: number) {
    this.limit = limit;
  }

  push(chunk: Buffer): void {
    const n = chunk.length;
    this.#total += n;
    const limit = this.limit;
    if (n === 0 || limit === 0) return;
    this.#ring ??= Buffer.allocUnsafe(limit);
    const ring = this.#ring;
    if (n >= limit) {
      chunk.copy(ring, 0, n - limit);
      this.#start = 0;
      this.#length = limit;
      return;
    }
    const end = (this.#start + this.#length) % limit;
    const first = Math.min(n, limit - end);
    chunk.copy(ring, end, 0, first);
    if (first < n) chunk.copy(ring, 0, first);
    const over = this.#length + n - limit;
    if (over > 0) {
      this.#start = (this.#start + over) % limit;
      this.#length = limit;
    } else {
      this.#length += n;
    }
  }

  /** Bytes written in all. */
  get totalBytes(): number {
    return this.#total;
  }

  /** Bytes that fell out of the front of the tail. */
  get droppedBytes(): number {
    return this.#total - this.#length;
  }

  /** The kept bytes, oldest first (a copy). */
  bytes(): Buffer {
    const ring = this.#ring;
    if (!ring || this.#length === 0) return Buffer.alloc(0);
    const head = ring.subarray(this.#start, Math.min(this.limit, this.#start + this.#length));
    const wrapped = this.#length - head.length;
    return Buffer.concat([head, ring.subarray(0, wrapped)], this.#length);
  }

  /**
   * The kept bytes as UTF-8. When bytes were dropped the cut may fall inside
   * a character: its leftover continuation bytes are skipped, not shown as U+FFFD.
   */
  text(): string {
    const bytes = this.bytes();
    let from = 0;
    if (this.droppedBytes > 0) {
      while (from < bytes.length && from < 3 && ((bytes[from] ?? 0) & 0xc0) === 0x80) from++;
    }
    return bytes.toString('utf8', from);
  }
}

/**
 * Decoded text of the last `limit` characters of one or more streams, with
 * absolute offsets (characters since the start), so that matchers can keep a
 * cursor across chunks while old text falls away. Pieces are joined only when
 * the text is read: appending stays cheap under heavy output.
 */
export class TextWindow {
  readonly limit: number;
  #pieces: string[] = [];
  #length = 0; // characters in #pieces
  #base = 0; // absolute offset of the first character in #pieces
  #joined: string | undefined;

  constructor(limit: number) {
    this.limit = limit;
  }

  append(text: string): void {
    if (text === '') return;
    this.#pieces.push(text);
    this.#length += text.length;
    this.#joined = undefined;
    const pieces = this.#pieces;
    while (pieces.length > 1 && this.#length - (pieces[0] as string).length >= this.limit) {
      const first = pieces.shift() as string;
      this.#length -= first.length;
      this.#base += first.length;
    }
    if (pieces.length > 256) void this.text; // many small pieces: compact them
  }

  /** The kept text (at most `limit` characters). */
  get text(): string {
    if (this.#joined === undefined) {
      let text = this.#pieces.join('');
      const over = text.length - this.limit;
      if (over > 0) {
        text = text.slice(over);
        this.#base += over;
        this.#length -= over;
      }
      this.#pieces = text === '' ? [] : [text];
      this.#joined = text;
    }
    return this.#joined;
  }

  /** Absolute offset of the first kept character. */
  get base(): number {
    void this.text;
    return this.#base;
  }

  /** Absolute offset just past the last character. */
  get end(): number {
    return this.#base + this.#length;
  }
}

/** Bytes in, text out: a UTF-8 decoder that never splits a character across chunks. */
export function utf8Decoder(): (chunk: Buffer) => string {
  const decoder = new StringDecoder('utf8');
  return (chunk) => decoder.write(chunk);
}

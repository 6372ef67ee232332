import { InvalidOptionError } from '../internal/errors.js';
import { type Cursor, type CutShortBody, SplitError, type Splitter } from './splitter.js';

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

  cutShort(start: Buffer, bytes: number): CutShortBody {
    return { body: start, arrived: bytes, length: bytes }; // no header says how long it would have been
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

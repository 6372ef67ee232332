import type { Cursor, CutShortBody, Splitter } from './splitter.js';

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

  cutShort(start: Buffer, bytes: number): CutShortBody {
    return { body: start, arrived: bytes, length: bytes }; // no header says how long it would have been
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

import { describeValue } from '../internal/describe.js';
import { InvalidOptionError } from '../internal/errors.js';
import {
  type Cursor,
  type CutShortBody,
  type Framer,
  SplitError,
  type Splitter,
} from './splitter.js';

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

  cutShort(start: Buffer, bytes: number): CutShortBody {
    return { body: start, arrived: bytes, length: bytes }; // no header says how long it would have been
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
    userCodeSeesReads: true,
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

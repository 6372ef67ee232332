import { describeValue } from '../internal/describe.js';
import { InvalidOptionError } from '../internal/errors.js';
import type { Framing } from '../internal/wire/frames.js';
import { framingName } from '../internal/wire/settings.js';
import { contentLengthFraming } from './content-length.js';
import { customSplitter } from './custom-framer.js';
import { type LengthPrefix, u16be, u32be, u32le } from './length-prefix.js';
import { lines } from './lines.js';
import { raw } from './raw.js';
import { type Framer, SplitError, type Splitter } from './splitter.js';

// The framing names are plain data the on-disk protocol shares (src/internal/wire/frames.ts).
export type { Framing } from '../internal/wire/frames.js';

/** @internal A resolved framing: a length prefix (read by header), or a splitter (by looking at the bytes). */
export type Wire = LengthPrefix | Splitter;

const FRAMINGS: Record<Framing, Wire> = {
  u32be,
  u32le,
  u16be,
  lines,
  'content-length': contentLengthFraming,
  raw,
};

/** @internal `what` names the value in the message, e.g. ``the `framing` option of createFrameProxy()``. */
export function resolveFraming(value: unknown, what: string): Wire {
  if (typeof value === 'object' && value !== null) return customSplitter(value as Framer, what);
  return FRAMINGS[framingName(value, what)];
}

/**
 * Encode one frame in a framing: header and body (`'u32be'` by default),
 * the line and its LF (`'lines'`), a `Content-Length` header block and the
 * body, the body itself (`'raw'`), or what a `Framer`'s `encode` gives.
 * Strings are encoded as UTF-8.
 *
 * @example
 * client.write(encodeFrame('ping'));                       // 00 00 00 04 70 69 6e 67
 * client.write(Buffer.concat([encodeFrame('a'), encodeFrame(Buffer.from([1, 2]))]));
 * child.stdin.write(encodeFrame(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }), 'lines'));
 */
export function encodeFrame(
  body: Uint8Array | string,
  framing: Framing | Framer = 'u32be',
): Buffer {
  const wire = resolveFraming(framing, 'the `framing` argument of encodeFrame()');
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  if (!(bytes instanceof Uint8Array)) {
    throw new InvalidOptionError(
      `Expected the body passed to encodeFrame() to be a Buffer, a Uint8Array or a string, got ${describeValue(body)}.`,
    );
  }
  if (bytes.length > wire.maxLength) {
    throw new InvalidOptionError(
      `encodeFrame(): a body of ${bytes.length} bytes does not fit a ${wire.name} header (at most ${wire.maxLength}).`,
    );
  }
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (wire.kind === 'split') {
    try {
      return Buffer.from(wire.encode(buffer));
    } catch (error) {
      if (error instanceof SplitError)
        throw new InvalidOptionError(`encodeFrame(): ${error.message}.`);
      throw error;
    }
  }
  return Buffer.concat([wire.write(bytes.length), buffer]);
}

import { describeValue, oneOf } from '../internal/describe.js';
import { InvalidOptionError } from '../internal/errors.js';

/**
 * Length-prefixed framings: a fixed-size header that holds the body length.
 * The proxy reads only headers as bytes pass; bodies are never copied unless
 * a fault targets their frame.
 */
export interface LengthPrefix {
  name: 'u32be';
  headerBytes: number;
  /** Largest length the header can express. */
  maxLength: number;
  read(buffer: Uint8Array, offset: number): number;
  write(length: number): Buffer;
}

export const u32be: LengthPrefix = {
  name: 'u32be',
  headerBytes: 4,
  maxLength: 0xffffffff,
  read: (b, o) =>
    (((b[o] as number) << 24) >>> 0) +
    ((b[o + 1] as number) << 16) +
    ((b[o + 2] as number) << 8) +
    (b[o + 3] as number),
  write: (length) => {
    const header = Buffer.allocUnsafe(4);
    header.writeUInt32BE(length, 0);
    return header;
  },
};

const FRAMINGS = { u32be } as const;

export function resolveFraming(value: unknown): LengthPrefix {
  const name = value ?? 'u32be';
  const framing = FRAMINGS[name as keyof typeof FRAMINGS];
  if (!framing) {
    throw new InvalidOptionError(
      `Expected the \`framing\` option to be ${oneOf(Object.keys(FRAMINGS))}, got ${describeValue(value)}. (u32le, u16be, lines, raw and custom framers are planned.)`,
    );
  }
  return framing;
}

/** Encode one frame: header + body. */
export function encodeFrame(body: Uint8Array, framing: LengthPrefix = u32be): Buffer {
  return Buffer.concat([framing.write(body.length), body]);
}

// The frame proxy's settings that are plain data, checked: the framing name,
// `maxFrameBytes`, `seed` and the fault rules. Both the frame proxy
// (src/proxy/settings.ts, framing.ts, decoder.ts) and a mock's faulted
// passthrough (which checks it when the response is enqueued) need them, so
// neither imports the other.
import { describeValue } from '../describe.js';
import { InvalidOptionError } from '../errors.js';
import { checkOptionKeys, optionError } from '../options.js';
import type { Framing } from './frames.js';
import { parseFaults } from './rules.js';

/** @internal The default of `maxFrameBytes`, for the proxy and the decoder alike. */
export const DEFAULT_MAX_FRAME = 64 * 1024 * 1024;

/**
 * @internal Each framing name, in the order messages list them, and the
 * longest body its header can declare: the `maxLength` of its codec in
 * src/proxy/ (test/proxy/framing-limits.test.ts keeps the two equal).
 */
export const FRAMING_LIMITS: Readonly<Record<Framing, { readonly maxLength: number }>> = {
  u32be: { maxLength: 0xffffffff },
  u32le: { maxLength: 0xffffffff },
  u16be: { maxLength: 0xffff },
  lines: { maxLength: Number.MAX_SAFE_INTEGER },
  'content-length': { maxLength: Number.MAX_SAFE_INTEGER },
  raw: { maxLength: Number.MAX_SAFE_INTEGER },
};

/** @internal A framing name (`'u32be'` when undefined); `what` names the value in the message. */
export function framingName(value: unknown, what: string): Framing {
  const name = value ?? 'u32be';
  if (!Object.hasOwn(FRAMING_LIMITS, name as string)) {
    throw new InvalidOptionError(
      `Expected ${what} to be one of ${Object.keys(FRAMING_LIMITS)
        .map((name) => JSON.stringify(name))
        .join(', ')}, or a Framer { decode, encode }, got ${describeValue(value)}.`,
    );
  }
  return name as Framing;
}

/** @internal `maxFrameBytes`: an integer from 0 to what the framing's header can hold. */
export function checkMaxFrameBytes(
  value: unknown,
  framing: { readonly maxLength: number },
  where: string,
): number {
  if (value === undefined) return Math.min(DEFAULT_MAX_FRAME, framing.maxLength);
  if (!Number.isInteger(value) || (value as number) < 0 || (value as number) > framing.maxLength) {
    throw new InvalidOptionError(
      `Expected the \`maxFrameBytes\` option of ${where} to be an integer from 0 to ${framing.maxLength}, got ${describeValue(value)}.`,
    );
  }
  return value as number;
}

/** @internal `seed`: an integer, 1 when undefined. */
export function checkSeed(value: unknown, where: string): number {
  const seed = value ?? 1;
  if (!Number.isInteger(seed)) throw optionError(where, 'seed', 'an integer', seed);
  return seed as number;
}

/**
 * @internal Check the proxy settings of a `passthrough: { framing, faults, seed, maxFrameBytes }`
 * response (throws an `InvalidOptionError` naming `where`), in the order
 * the proxy checks them. A framing must be a name: the settings travel to
 * the shim as JSON.
 */
export function checkPassthrough(spec: unknown, where: string): void {
  const framing = (spec as { framing?: unknown }).framing;
  if (framing !== undefined && typeof framing !== 'string') {
    throw new InvalidOptionError(
      `Expected the \`framing\` of ${where} to be a framing name such as "lines" (a custom Framer cannot reach the shim), got ${describeValue(framing)}.`,
    );
  }
  checkOptionKeys(spec as object, ['framing', 'faults', 'seed', 'maxFrameBytes'], where);
  const { maxFrameBytes, seed, faults } = spec as Record<string, unknown>;
  const name = framingName(framing, `the \`framing\` option of ${where}`);
  checkMaxFrameBytes(maxFrameBytes, FRAMING_LIMITS[name], where);
  checkSeed(seed, where);
  parseFaults(faults);
}

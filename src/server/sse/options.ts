import { describeValue } from '../../internal/describe.js';
import { InvalidOptionError } from '../../internal/errors.js';
import { checkOptionKeys, optionError } from '../../internal/options.js';
import { toWireResponse } from '../response.js';
import type { MockServerResponse, SseEvent } from '../types.js';

// What the builders (sse.*, reply.*) share: the response fields they pass
// through, and the checks of their own options (InvalidOptionError, when given).

/** The fields of a response that every builder passes through as they are. */
export const RESPONSE_OPTION_KEYS = [
  'status',
  'headers',
  'delayMs',
  'eventDelayMs',
  'cut',
  'times',
  'optional',
  'resetBeforeHeaders',
  'retryable',
] as const;

/**
 * The options every builder takes besides its own: fields of the
 * {@link MockServerResponse} it returns, passed through as given, so
 * `sse.chat('hi', { cut })` equals `{ ...sse.chat('hi'), cut }`.
 */
export type ResponseOptions = Pick<MockServerResponse, (typeof RESPONSE_OPTION_KEYS)[number]>;

/** Check `options` has only `own` keys and response fields; returns it as an object. */
export function builderOptions<T extends object>(
  options: T | undefined,
  own: readonly string[],
  where: string,
): Partial<T> {
  return checkOptionKeys(options, [...own, ...RESPONSE_OPTION_KEYS], where);
}

/**
 * The response a builder made: `body` and the response fields of `options`
 * (copied). Checked at once with toWireResponse, so a bad `cut` or `status`
 * fails where the builder was called.
 */
export function withResponseFields(
  body: MockServerResponse,
  options: ResponseOptions,
  where: string,
): MockServerResponse {
  const response: MockServerResponse = { ...body };
  for (const key of RESPONSE_OPTION_KEYS) {
    const value = options[key];
    if (value !== undefined) Object.assign(response, { [key]: structuredCopy(value) });
  }
  toWireResponse(response, where);
  return response;
}

/** The response a stream builder made from its events. */
export function sseResponse(
  events: SseEvent[],
  options: ResponseOptions,
  where: string,
): MockServerResponse {
  return withResponseFields({ sse: events }, options, where);
}

function structuredCopy<T>(value: T): T {
  return typeof value === 'object' && value !== null ? structuredClone(value) : value;
}

/** A builder's first argument: one delta (a string) or one per element. */
export function deltas(value: unknown, where: string, what = 'text argument'): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return [...value];
  throw new InvalidOptionError(
    `Expected the ${what} of ${where} to be a string (one delta) or an array of strings (one delta each), got ${describeValue(value)}.`,
  );
}

/** An option that is one delta or a list of them; `[]` when undefined. */
export function deltasOption(value: unknown, where: string, option: string): string[] {
  if (value === undefined) return [];
  return deltas(value, where, `\`${option}\` option`);
}

/** A string option, `fallback` when undefined. */
export function stringOption(
  value: unknown,
  where: string,
  option: string,
  fallback: string,
): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string') throw optionError(where, option, 'a string', value);
  return value;
}

/** A string-or-null option, `fallback` when undefined. */
export function nullableString(
  value: unknown,
  where: string,
  option: string,
  fallback: string | null,
): string | null {
  if (value === null) return null;
  return stringOption(value, where, option, fallback as string);
}

/** A non-negative integer option (a count, a timestamp), `fallback` when undefined. */
export function countOption(
  value: unknown,
  where: string,
  option: string,
  fallback: number,
): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || (value as number) < 0) {
    throw optionError(where, option, 'a non-negative integer', value);
  }
  return value as number;
}

/** A boolean option, `fallback` when undefined. */
export function booleanOption(
  value: unknown,
  where: string,
  option: string,
  fallback: boolean,
): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw optionError(where, option, 'true or false', value);
  return value;
}

/** An object option with only `keys`, or undefined. */
export function objectOption(
  value: unknown,
  where: string,
  option: string,
  keys: readonly string[],
): Record<string, unknown> | undefined {
  if (value === undefined) return undefined;
  return checkOptionKeys(value as object, keys, `the \`${option}\` option of ${where}`) as Record<
    string,
    unknown
  >;
}

/** A list option, `[]` when undefined. */
export function listOption(
  value: unknown,
  where: string,
  option: string,
  expected: string,
): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw optionError(where, option, expected, value);
  return value;
}

/**
 * Tool-call arguments (or tool input): a string is one piece, an array one
 * piece each, an object its JSON in one piece; `fallback` when undefined.
 */
export function jsonPieces(
  value: unknown,
  where: string,
  option: string,
  fallback: string[],
): string[] {
  if (value === undefined) return fallback;
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) {
    if (value.every((item) => typeof item === 'string')) return [...value];
  } else if (typeof value === 'object' && value !== null) {
    return [JSON.stringify(value)];
  }
  throw optionError(
    where,
    option,
    'a string (one piece of JSON), an array of strings (one piece each) or an object (sent as its JSON)',
    value,
  );
}

/**
 * A usage object: `defaults` (in their order) with what `value` gives put
 * over them, and keys only `value` has after them. A key whose default is a
 * number takes a non-negative integer. `total` names a key that is the sum
 * of two others unless `value` sets it.
 */
export function usageOption(
  value: unknown,
  where: string,
  defaults: Record<string, unknown>,
  total?: readonly [string, string, string],
): Record<string, unknown> {
  if (
    value !== undefined &&
    (typeof value !== 'object' || value === null || Array.isArray(value))
  ) {
    throw optionError(where, 'usage', 'an object of token counts', value);
  }
  const given = Object.fromEntries(
    Object.entries(value ?? {}).filter(([, count]) => count !== undefined),
  ) as Record<string, unknown>;
  for (const [key, count] of Object.entries(given)) {
    if (
      typeof defaults[key] === 'number' &&
      (!Number.isSafeInteger(count) || (count as number) < 0)
    ) {
      throw optionError(where, `usage.${key}`, 'a non-negative integer', count);
    }
  }
  const usage: Record<string, unknown> = { ...defaults, ...structuredClone(given) };
  if (total && given[total[0]] === undefined) {
    usage[total[0]] = (usage[total[1]] as number) + (usage[total[2]] as number);
  }
  return usage;
}

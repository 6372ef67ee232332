import { statSync } from 'node:fs';
import { describeValue, nearest, oneOf } from './describe.js';
import { InvalidOptionError } from './errors.js';
import { MAX_TIMER_MS } from './limits.js';

export { MAX_TIMER_MS };

/**
 * Check that `options` is an object with only `keys`; `where` names the call
 * in messages, e.g. `spawnProcess("git")`. Returns the options typed as given.
 */
export function checkOptionKeys<T extends object>(
  options: T | undefined,
  keys: readonly string[],
  where: string,
): T {
  if (options === undefined) return {} as T;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidOptionError(
      `Expected the options of ${where} to be an object, got ${describeValue(options)}.`,
    );
  }
  for (const key of Object.keys(options)) {
    if (!keys.includes(key)) {
      const guess = nearest(key, keys);
      throw new InvalidOptionError(
        `Unknown option \`${key}\` for ${where}.${guess ? ` Did you mean \`${guess}\`?` : ''} Valid options: ${keys.join(', ')}.`,
      );
    }
  }
  return options;
}

/** `` Expected the `timeoutMs` option of run("git") to be …, got -1 (number). `` */
export function optionError(
  where: string,
  option: string,
  expected: string,
  value: unknown,
): InvalidOptionError {
  return new InvalidOptionError(
    `Expected the \`${option}\` option of ${where} to be ${expected}, got ${describeValue(value)}.`,
  );
}

/**
 * A duration in whole milliseconds: `value` itself, or `fallback` when it is
 * undefined. `min` is 0 or 1 (whether zero is allowed).
 */
export function checkMs(
  where: string,
  option: string,
  value: unknown,
  fallback: number,
  min: 0 | 1 = 0,
): number {
  if (value === undefined) return fallback;
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    value < min ||
    value > MAX_TIMER_MS
  ) {
    const kind = min === 0 ? 'an integer' : 'a positive integer';
    throw optionError(where, option, `${kind} of milliseconds up to ${MAX_TIMER_MS}`, value);
  }
  return value;
}

const PLATFORMS: readonly NodeJS.Platform[] = [
  'aix',
  'android',
  'darwin',
  'freebsd',
  'haiku',
  'linux',
  'openbsd',
  'sunos',
  'win32',
  'cygwin',
  'netbsd',
];

/** The `platform` option: a Node platform name, `process.platform` when undefined. */
export function resolvePlatform(value: unknown, where: string): NodeJS.Platform {
  if (value === undefined) return process.platform;
  if (!PLATFORMS.includes(value as NodeJS.Platform)) {
    throw new InvalidOptionError(
      `Expected the \`platform\` option of ${where} to be ${oneOf(PLATFORMS)}, got ${describeValue(value)}.`,
    );
  }
  return value as NodeJS.Platform;
}

/** Whether `path` is an existing dir (false when missing or unreadable). */
export function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

import { existsSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { describeValue } from './describe.js';
import { InvalidOptionError } from './errors.js';

/**
 * Which mode a cassette runs in (mock binaries MB-24, the mock server HT-09):
 * the mode given, unless `SHIMKIT_CASSETTE_MODE` says otherwise (so CI can
 * replay what a developer recorded), with `auto` resolved by whether the
 * file exists. Shared so both kinds of cassette read the variable alike.
 */

/** The variable that overrides every cassette's mode. */
export const CASSETTE_MODE_VAR = 'SHIMKIT_CASSETTE_MODE';

/**
 * The `cassette` option as a path or an object with `path`: the absolute
 * path, and the object's own fields (a string is `{ path }`). `shape` names
 * the accepted object in the message (`{ path, mode }`).
 */
export function cassetteTarget(
  value: unknown,
  where: string,
  shape: string,
): { path: string; options: Record<string, unknown> } {
  const options = typeof value === 'string' ? { path: value } : value;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidOptionError(
      `Expected the \`cassette\` option of ${where} to be a path or ${shape}, got ${describeValue(value)}.`,
    );
  }
  const { path } = options as { path?: unknown };
  if (typeof path !== 'string' || !isAbsolute(path)) {
    throw new InvalidOptionError(
      `Expected the cassette path of ${where} to be an absolute file path, got ${describeValue(path)}.`,
    );
  }
  return { path, options: options as Record<string, unknown> };
}

/**
 * The mode to run in now: `given` (checked against `modes`, `'auto'` when
 * undefined) or `SHIMKIT_CASSETTE_MODE` when set; `auto` is `replay` when
 * the file exists, else `record`. A replay without a file is refused here,
 * with how to record it (`recordHint` adds what recording needs).
 */
export function resolveCassetteMode<M extends string>(
  given: unknown,
  modes: readonly M[],
  path: string,
  where: string,
  env: NodeJS.ProcessEnv = process.env,
  recordHint = '',
): Exclude<M, 'auto'> {
  const listed = modes.map((m) => `'${m}'`).join(', ');
  if (given !== undefined && !modes.includes(given as M)) {
    throw new InvalidOptionError(
      `Expected the cassette \`mode\` of ${where} to be one of ${listed}, got ${describeValue(given)}.`,
    );
  }
  const fromEnv = env[CASSETTE_MODE_VAR];
  const mode = fromEnv === undefined || fromEnv === '' ? (given ?? 'auto') : fromEnv;
  if (!modes.includes(mode as M)) {
    throw new InvalidOptionError(
      `${where}: ${CASSETTE_MODE_VAR}=${JSON.stringify(fromEnv)} is not one of ${listed}.`,
    );
  }
  if (mode === 'auto') return (existsSync(path) ? 'replay' : 'record') as Exclude<M, 'auto'>;
  if (mode === 'replay' && !existsSync(path)) {
    throw new InvalidOptionError(
      `${where}: there is no cassette to replay at ${path}. Record it first (mode 'record' or 'auto', or ${CASSETTE_MODE_VAR}=record)${recordHint}.`,
    );
  }
  return mode as Exclude<M, 'auto'>;
}

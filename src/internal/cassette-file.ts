import { mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { writeFileAtomic } from './atomic.js';
import { InvalidOptionError } from './errors.js';

/**
 * Reading and writing a cassette file (mock binaries and the mock server):
 * JSON, read with errors that name the file and how to get a good one, and
 * written atomically, 0600.
 */

/**
 * The error for a cassette that cannot be used: `what` is wrong with it
 * (`is not valid JSON (…)`, `has a bad call: calls[2].argv …`).
 */
export function brokenCassette(
  path: string,
  where: string,
  what: string,
  cause?: unknown,
): InvalidOptionError {
  return new InvalidOptionError(
    `${where}: the cassette ${path} ${what}. Fix that by hand, or delete the file and record it again (SHIMKIT_CASSETTE_MODE=record).`,
    { cause },
  );
}

/** The cassette's JSON value (not yet checked): unreadable or not JSON is an `InvalidOptionError`. */
export function readCassetteJson(path: string, where: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new InvalidOptionError(
      `${where}: cannot read the cassette ${path}: ${(error as Error).message}.`,
      { cause: error },
    );
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw brokenCassette(path, where, `is not valid JSON (${(error as Error).message})`, error);
  }
}

/**
 * Write `value` as the cassette's JSON (2-space indented), atomically: a
 * temp file with a random name, created exclusively (a planted link is
 * never followed), renamed into place. It is 0600 whatever the umask, as
 * every file shimkit writes (SEC-01): what a cassette holds came from the
 * program under test, and redaction only catches what looks like a secret.
 * A file that was there (of another mode) is replaced by the new one, so
 * it is 0600 afterwards too. Git keeps only the executable bit, so the
 * file commits as any other. Its dir is created if missing.
 */
export function writeCassetteJson(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`, 0o600);
}

import { tmpdir } from 'node:os';
import { basename, dirname, resolve } from 'node:path';

/**
 * The system temp dir as it was before the leak sanitizer gave each test a
 * `TMPDIR` of its own (LK-03). What lives as long as the process — the
 * leftover registry, the sweep, the watcher — goes there, never in a
 * test's dir, which is removed when the test ends. A shimkit process
 * started in a test (a `shimkit serve` daemon) learns it from
 * `SHIMKIT_HOST_TMPDIR`, so it records itself where its owner's sweep looks.
 */
export const HOST_TMPDIR_VAR = 'SHIMKIT_HOST_TMPDIR';

/** The prefix of a scope's `TMPDIR`, made directly in the host temp dir. */
export const SCOPE_TMP_PREFIX = 'shimkit-tmp-';

/**
 * The host temp dir: `SHIMKIT_HOST_TMPDIR` while `TMPDIR` is a sanitizer
 * scope's dir in it, else `os.tmpdir()`. A `TMPDIR` set to anything else
 * (a test giving a child a temp dir of its own) is the caller's choice and
 * wins over an inherited host dir.
 */
export function hostTmpdir(): string {
  const inherited = process.env[HOST_TMPDIR_VAR];
  const current = tmpdir();
  if (inherited === undefined || inherited === '') return current;
  const inScope =
    basename(current).startsWith(SCOPE_TMP_PREFIX) &&
    resolve(dirname(current)) === resolve(inherited);
  return inScope ? inherited : current;
}

/** Called before the first scope changes `TMPDIR`: what `hostTmpdir()` says from then on, here and in children. */
export function pinHostTmpdir(): void {
  process.env[HOST_TMPDIR_VAR] ??= tmpdir();
}

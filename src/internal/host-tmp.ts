import { tmpdir } from 'node:os';

/**
 * The system temp dir as it was before the leak sanitizer gave each test a
 * `TMPDIR` of its own (LK-03). What lives as long as the process — the
 * leftover registry, the sweep, the watcher — goes there, never in a
 * test's dir, which is removed when the test ends. A shimkit process
 * started in a test (a `shimkit serve` daemon) learns it from
 * `SHIMKIT_HOST_TMPDIR`, so it records itself where its owner's sweep looks.
 */
export const HOST_TMPDIR_VAR = 'SHIMKIT_HOST_TMPDIR';

export function hostTmpdir(): string {
  const inherited = process.env[HOST_TMPDIR_VAR];
  return inherited !== undefined && inherited !== '' ? inherited : tmpdir();
}

/** Called before the first scope changes `TMPDIR`: what `hostTmpdir()` says from then on, here and in children. */
export function pinHostTmpdir(): void {
  process.env[HOST_TMPDIR_VAR] ??= tmpdir();
}

import { tmpdir } from 'node:os';

/**
 * The system temp dir as it was before the leak sanitizer gave each test a
 * `TMPDIR` of its own (LK-03). What lives as long as the process — the
 * leftover registry, the sweep, the watcher — goes there, never in a
 * test's dir, which is removed when the test ends.
 */
let pinned: string | undefined;

export function hostTmpdir(): string {
  return pinned ?? tmpdir();
}

/** Called before the first scope changes `TMPDIR`: what `hostTmpdir()` says from then on. */
export function pinHostTmpdir(): void {
  pinned ??= tmpdir();
}

/**
 * For tests of what shimkit does in the system temp dir itself (the leftover
 * sweep, the registry, dirs another user must enter): the leak sanitizer's
 * per-test TMPDIR is off (`files: 'off'`), so `os.tmpdir()` is the host's, as
 * it is for a suite without the sanitizer. Processes, objects and fds are
 * still judged.
 */
export const inSystemTmpdir = { meta: { shimkit: { leaks: { files: 'off' } } } } as const;

/** `env` without the leak sanitizer's vars (its cookie, the origin, the host temp dir), for exact comparisons. */
export function withoutLeakVars<T extends Record<string, string | undefined>>(env: T): T {
  const copy = { ...env };
  for (const key of ['SHIMKIT_LEAK_COOKIE', 'SHIMKIT_LEAK_ORIGIN', 'SHIMKIT_HOST_TMPDIR'])
    delete copy[key];
  return copy;
}

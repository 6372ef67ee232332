import { accessSync, constants, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { randomName } from './leftovers/names.js';

/** statfs(2)'s f_type of a tmpfs. */
const TMPFS_MAGIC = 0x01021994;
/** Free space a memory file system must have to be used (Docker's 64 MiB /dev/shm is passed over). */
export const MEMORY_TMP_MIN_FREE = 1024 ** 3;

/** Where a memory file system may be found, for `memoryTmpDir()` (injectable for tests). */
export interface MemoryTmpProbe {
  platform?: NodeJS.Platform;
  env?: NodeJS.ProcessEnv;
  /** Candidates in order; default `$XDG_RUNTIME_DIR` (this user's own), then `/dev/shm`. */
  candidates?: string[];
}

const cache = new Map<string, string | undefined>();

/**
 * @internal The dir a mock's temp root goes in when the caller chose none
 * (no `tmpDir` option, `TMPDIR` unset): a tmpfs on Linux (`$XDG_RUNTIME_DIR`
 * when it is this user's own, else `/dev/shm`) with at least 1 GiB free,
 * where this user may create files and run them (not mounted `noexec`).
 * A call the shell serves creates two files there (its record and its claim
 * marker), which on a disk's file system cost more than the rest of the
 * call. Undefined elsewhere, or with `SHIMKIT_TMPFS=0`: then `os.tmpdir()`.
 * Decided once per process for each environment.
 */
export function memoryTmpDir(probe: MemoryTmpProbe = {}): string | undefined {
  const platform = probe.platform ?? process.platform;
  const env = probe.env ?? process.env;
  if (platform !== 'linux' || env.SHIMKIT_TMPFS === '0' || (env.TMPDIR ?? '') !== '') {
    return undefined;
  }
  const candidates = probe.candidates ?? [
    ...(env.XDG_RUNTIME_DIR && isAbsolute(env.XDG_RUNTIME_DIR) ? [env.XDG_RUNTIME_DIR] : []),
    '/dev/shm',
  ];
  const key = candidates.join('\0');
  if (cache.has(key)) return cache.get(key);
  const found = candidates.find((dir) => usable(dir, dir !== '/dev/shm'));
  cache.set(key, found);
  return found;
}

/** A tmpfs with room, where this user can write and execute (a private dir must be this user's own, 0700). */
function usable(dir: string, privateDir: boolean): boolean {
  try {
    const fs = statfsSync(dir);
    if (fs.type !== TMPFS_MAGIC || fs.bavail * fs.bsize < MEMORY_TMP_MIN_FREE) return false;
    if (privateDir) {
      const st = statSync(dir);
      if (st.uid !== process.getuid?.() || (st.mode & 0o077) !== 0) return false;
    }
    // access(X_OK) fails on a noexec mount: the shims could not run there.
    const file = join(dir, `shimkit-probe-${randomName()}`);
    writeFileSync(file, '', { mode: 0o700, flag: 'wx' });
    try {
      accessSync(file, constants.X_OK);
    } finally {
      rmSync(file, { force: true });
    }
    return true;
  } catch {
    return false;
  }
}

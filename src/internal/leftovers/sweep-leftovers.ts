import { isAbsolute, resolve } from 'node:path';
import { hostTmpdir } from '../host-tmp.js';
import { memoryTmpDir } from '../memory-tmp.js';
import { checkOptionKeys, optionError } from '../options.js';
import { type SweepReport, sweepDirs } from './sweep.js';

export type { SweepReport } from './sweep.js';

/** Options of `sweepLeftovers()`. */
export interface SweepOptions {
  /**
   * Temp parents to sweep besides `os.tmpdir()` (and the tmpfs mocks go in
   * when no `tmpDir` is given, see `MockBinDirOptions.tmpDir`): the `tmpDir` you gave
   * `createMockBinary`, `createMockBinDir` or `createSandbox`. (Roots there
   * are also listed in their owner's registry in `os.tmpdir()`, so this is
   * only needed when that registry is gone, or for a sandbox of a process
   * whose `os.tmpdir()` was different.)
   * @default []
   * @example
   * sweepLeftovers({ dirs: ['/var/tmp/my-tests'] });
   */
  dirs?: readonly string[];
}

/**
 * Remove what test processes that died without cleaning up left behind
 * (requirement SP-11): mock bin dirs, sandboxes, trash dirs and registries whose
 * owning process is gone (dead, a zombie, or its pid reused by a process with
 * another start time), and — from their registries — the process groups they
 * left running (SIGKILL, POSIX) and the proxy socket files they left bound.
 * Nothing of a live process, of another user, or made with `keep: true` is
 * touched. shimkit already does this once, lazily, on its first use in each
 * process; call this (what `shimkit clean` runs) to do it on demand.
 * Synchronous; never throws for what it finds — failures are in the report.
 *
 * @example
 * const report = sweepLeftovers();
 * console.log(`removed ${report.removed.length} dirs, killed ${report.killed.length} groups`);
 */
export function sweepLeftovers(options?: SweepOptions): SweepReport {
  const where = 'sweepLeftovers()';
  const o = checkOptionKeys(options, ['dirs'], where);
  const dirs = o.dirs ?? [];
  if (
    !Array.isArray(dirs) ||
    !dirs.every((d) => typeof d === 'string' && isAbsolute(d) && !d.includes('\0'))
  ) {
    throw optionError(where, 'dirs', 'an array of absolute dir paths', dirs);
  }
  const memory = memoryTmpDir();
  const parents = [
    ...new Set([hostTmpdir(), ...(memory ? [memory] : []), ...dirs].map((d) => resolve(d))),
  ];
  return sweepDirs(parents);
}

import { accessSync, constants } from 'node:fs';
import { childProcess } from '../internal/lazy.js';
import { shellReads } from '../queue/sh-names.js';
import type { ShCapabilities, WireConfig } from '../queue/types.js';

/** The external commands the POSIX shim's fast path runs, by absolute path. */
export interface ShTools {
  mkdir: string | undefined;
  sleep: string | undefined;
  /** What `sleep` takes: fractions of a second (`sleep 0.25`), or only whole seconds. */
  sleepTakes: 'fractions' | 'seconds';
}

/**
 * Where the tools are looked for: the system dirs, never PATH, which a test
 * may have pointed at mocks of `ln` or `sleep` (or at nothing at all).
 */
const SYSTEM_DIRS = ['/bin', '/usr/bin'];

let found: ShTools | undefined;

/**
 * The tools on this machine, found once per process (`sleep` is run once, to
 * see whether it takes fractions: POSIX asks only for whole seconds). The
 * claim protocol itself needs none: a shell's noclobber creates files
 * exclusively. Without `mkdir` or `sleep`, responses that need them go to
 * the runner.
 */
export function shTools(): ShTools {
  if (found) return found;
  const sleep = systemCommand('sleep');
  const fractions =
    sleep !== undefined &&
    childProcess().spawnSync(sleep, ['0.001'], { stdio: 'ignore' }).status === 0;
  found = {
    mkdir: systemCommand('mkdir'),
    sleep,
    sleepTakes: fractions ? 'fractions' : 'seconds',
  };
  return found;
}

function systemCommand(name: string): string | undefined {
  for (const dir of SYSTEM_DIRS) {
    const file = `${dir}/${name}`;
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * What the fast path can do for a mock with `config` on `platform`, or
 * undefined when every call should run the runner: Windows (the `.cmd`
 * shim), a shim for another platform than this one, `fastPath: false`,
 * `recordEnv: true` (redaction is the runner's), or a `recordEnv` key no
 * shell can read or that a shell sets itself.
 */
export function shCapabilities(
  config: WireConfig,
  platform: NodeJS.Platform,
  fastPath: boolean,
): ShCapabilities | undefined {
  if (!fastPath || platform === 'win32' || platform !== process.platform) return undefined;
  const { recordEnv } = config;
  if (recordEnv === true) return undefined;
  if (Array.isArray(recordEnv) && !recordEnv.every(shellReads)) {
    return undefined;
  }
  const tools = shTools();
  return {
    sleep: tools.sleep === undefined ? 'none' : tools.sleepTakes,
    mkdir: tools.mkdir !== undefined,
  };
}

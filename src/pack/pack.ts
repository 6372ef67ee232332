import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { RunResult } from '../process/run.js';
import { PackedInstallError } from './errors.js';
import { exec } from './exec.js';
import { type NpmHome, type NpmLocation, npmEnvKeys, npmFlags } from './npm.js';

/**
 * Set in the env of the `npm pack` that `verifyPackedInstall()` runs, to the
 * dir it packs: a `prepack` or `prepare` script that calls it again is
 * refused instead of packing forever.
 */
export const PACKING_VAR = 'SHIMKIT_VERIFY_PACK_RUNNING';

/** Throw if this process runs inside the `npm pack` of a `verifyPackedInstall()`. */
export function refuseReentry(packageDir: string, env: NodeJS.ProcessEnv = process.env): void {
  const outer = env[PACKING_VAR];
  if (outer === undefined || outer === '') return;
  throw new PackedInstallError(
    `verifyPackedInstall() of ${packageDir} was called from inside the \`npm pack\` that verifyPackedInstall() runs for ${outer} (its prepack, prepare or postpack script runs the check again), which would pack forever; refused. Run the check after packing, e.g. in a CI step or a test, not from a pack lifecycle script.`,
  );
}

/** One entry of `npm pack --json`. */
export interface PackJson {
  name: string;
  version: string;
  filename: string;
  size?: number;
  unpackedSize?: number;
  files: Array<{ path: string; size?: number; mode?: number }>;
}

export interface Packed {
  result: RunResult;
  /** Absent when npm pack failed or printed no JSON. */
  json?: PackJson;
  /** The tarball's path: `--pack-destination` and the file name npm printed. */
  tarball?: string;
}

/**
 * `npm pack --json --pack-destination DIR` in the package dir, with the
 * host's env (the package's build tools) but npm's own config and cache, and
 * the re-entry marker. The file name is read from npm's JSON, never guessed.
 */
export async function pack(
  npm: NpmLocation,
  home: NpmHome,
  packageDir: string,
  destination: string,
  timeoutMs: number,
): Promise<Packed> {
  mkdirSync(destination, { recursive: true });
  const env: Record<string, string | undefined> = {};
  for (const key of npmEnvKeys(process.env)) env[key] = undefined;
  env[PACKING_VAR] = packageDir;
  const result = await exec(
    npm.node,
    [npm.cli, 'pack', '--json', '--pack-destination', destination, ...npmFlags(home)],
    // The JSON lists every file: keep all of it (a report shows only its tail).
    { cwd: packageDir, env, timeoutMs, tailBytes: 16 * 1024 * 1024 },
  );
  if (result.exitCode !== 0 || result.timedOut) return { result };
  const json = parsePackJson(result.stdout);
  if (!json) return { result };
  return { result, json, tarball: join(destination, json.filename) };
}

/**
 * The last JSON array npm printed: with `--json` npm prints one, but a
 * lifecycle script may print to stdout before it.
 */
export function parsePackJson(stdout: string): PackJson | undefined {
  const starts = [0, ...[...stdout.matchAll(/\n\[/g)].map((m) => (m.index ?? 0) + 1)].reverse();
  for (const start of starts) {
    try {
      const parsed = JSON.parse(stdout.slice(start)) as unknown;
      const first = Array.isArray(parsed) ? (parsed[0] as PackJson | undefined) : undefined;
      if (first && typeof first.filename === 'string' && Array.isArray(first.files)) return first;
    } catch {
      // not here: try an earlier start
    }
  }
  return undefined;
}

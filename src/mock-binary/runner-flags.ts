import { truncate } from '../internal/describe.js';
import { InvalidOptionError } from '../internal/errors.js';
import { childProcess } from '../internal/lazy.js';
import { errnoCode } from '../queue/errors.js';
import { NODE_RUNTIME_VARS } from './node-env.js';

/**
 * Flags the shim gives the Node that runs the runner. A mocked call runs a
 * few hundred lines of JavaScript once and exits, so JIT compilers and V8's
 * background threads only cost it time: without them a call takes about
 * 0.6 ms less wall time and more than 1 ms less CPU (`npm run bench`).
 * `--no-expose-wasm` keeps `--jitless` from printing a warning on Node 20.
 */
export const RUNNER_FLAGS: readonly string[] = [
  '--jitless',
  '--no-expose-wasm',
  '--single-threaded',
];

const accepted = new Map<string, readonly string[]>();

/**
 * The flags `nodePath` takes cleanly: all of RUNNER_FLAGS if `node <flags>
 * -e 0` exits 0 and prints nothing (a Node that dropped a flag refuses it;
 * one whose V8 warns about a combination says so on stderr — `--version`
 * would show neither), none otherwise, so an older Node still runs the
 * mocks. A `nodePath` that cannot run even `node -e 0` is refused here, when
 * the mock is made, instead of failing every call (`where` names the call).
 * Asked once per Node per process (one Node start, ~25 ms), with the env
 * the runner gets. A shim for another platform is not probed.
 */
export function runnerFlags(
  nodePath: string,
  platform: NodeJS.Platform,
  where: string,
): readonly string[] {
  if (platform !== process.platform) return [];
  let flags = accepted.get(nodePath);
  if (flags === undefined) {
    if (probe(nodePath, RUNNER_FLAGS).ok) {
      flags = RUNNER_FLAGS;
    } else {
      const plain = probe(nodePath, []);
      if (!plain.ok) {
        throw new InvalidOptionError(
          `The \`nodePath\` option of ${where} must be a Node that runs: ${JSON.stringify(nodePath)} ${plain.why}. Leave it out to use this process's Node (${process.execPath}).`,
        );
      }
      flags = [];
    }
    accepted.set(nodePath, flags);
  }
  return flags;
}

function probe(nodePath: string, flags: readonly string[]): { ok: boolean; why: string } {
  const env = { ...process.env };
  for (const name of NODE_RUNTIME_VARS) delete env[name];
  const run = childProcess().spawnSync(nodePath, [...flags, '-e', '0'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 10_000,
    windowsHide: true,
  });
  if (run.error)
    return { ok: false, why: `cannot be started (${errnoCode(run.error) ?? run.error.message})` };
  const stderr = run.stderr.toString().trim();
  if (run.status !== 0) {
    return {
      ok: false,
      why: `exited with ${run.status ?? run.signal} for \`-e 0\`${stderr ? `: ${truncate(stderr, 200)}` : ''}`,
    };
  }
  return { ok: run.stdout.length === 0 && stderr === '', why: 'printed output for `-e 0`' };
}

import { spawnSync } from 'node:child_process';
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
 * would show neither), none otherwise, so an unknown Node still runs the
 * mocks. Asked once per Node per process (one Node start, ~25 ms), with the
 * same env the runner gets.
 */
export function runnerFlags(nodePath: string): readonly string[] {
  let flags = accepted.get(nodePath);
  if (flags === undefined) {
    const env = { ...process.env };
    for (const name of NODE_RUNTIME_VARS) delete env[name];
    const probe = spawnSync(nodePath, [...RUNNER_FLAGS, '-e', '0'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 10_000,
      windowsHide: true,
    });
    const quiet = probe.stdout?.length === 0 && probe.stderr?.length === 0;
    flags = probe.status === 0 && quiet ? RUNNER_FLAGS : [];
    accepted.set(nodePath, flags);
  }
  return flags;
}

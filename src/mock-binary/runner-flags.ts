import { spawnSync } from 'node:child_process';

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
 * The flags `nodePath` accepts: all of RUNNER_FLAGS if `node <flags>
 * --version` succeeds (a Node that dropped one refuses it there), none
 * otherwise, so an unknown Node still runs the mocks. Asked once per Node
 * per process (~3 ms).
 */
export function runnerFlags(nodePath: string): readonly string[] {
  let flags = accepted.get(nodePath);
  if (flags === undefined) {
    const probe = spawnSync(nodePath, [...RUNNER_FLAGS, '--version'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 10_000,
      windowsHide: true,
    });
    flags = probe.status === 0 && probe.stderr.length === 0 ? RUNNER_FLAGS : [];
    accepted.set(nodePath, flags);
  }
  return flags;
}

import type { ChildProcess } from 'node:child_process';
import crossSpawn from 'cross-spawn';
import type { ResolvedSpawn } from './options.js';

/**
 * Start the child through cross-spawn (so `.cmd` shims run on Windows),
 * detached on POSIX so it leads its own process group, and feed it `input`.
 */
export function spawnChild(
  command: string,
  args: readonly string[],
  options: ResolvedSpawn,
): ChildProcess {
  const child = crossSpawn(command, [...args], {
    cwd: options.cwd,
    env: options.env,
    detached: options.platform !== 'win32',
    stdio: [options.stdin, 'pipe', 'pipe'],
    windowsHide: true,
  });
  if (child.stdin) {
    child.stdin.on('error', () => {}); // EPIPE when the child exits before reading all input
    if (options.input !== undefined) child.stdin.end(options.input);
  }
  return child;
}

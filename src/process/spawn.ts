import { type ChildProcess, spawn } from 'node:child_process';
import type { ResolvedSpawn } from './options.js';
import { spawnPythonPty } from './pty/python.js';
import { windowsSpawn } from './windows-command.js';

/**
 * Start the child, detached on POSIX so it leads its own process group, and
 * feed it `input`. On Windows a `.cmd` (a mock binary's shim, npm's shims)
 * runs through cmd.exe with a command line that gives it exactly `args`
 * (see windows-command.ts). With `pty`, the program runs on a pseudo-terminal
 * (see pty/).
 */
export function spawnChild(
  command: string,
  args: readonly string[],
  options: ResolvedSpawn,
): ChildProcess {
  if (options.pty) {
    const child = spawnPythonPty({ ...options, command, args, pty: options.pty });
    // run()'s input: typed, then Ctrl+D (what end() types on a terminal).
    if (options.input !== undefined) {
      child.stdin?.write(options.input);
      child.stdin?.end('\x04');
    }
    return child;
  }
  const how =
    options.platform === 'win32'
      ? windowsSpawn(command, args, options.file, process.env) // the test process's ComSpec
      : { file: command, args: [...args], windowsVerbatimArguments: false };
  const child = spawn(how.file, how.args, {
    cwd: options.cwd,
    env: options.env,
    detached: options.platform !== 'win32',
    stdio: [options.stdin, 'pipe', 'pipe'],
    windowsHide: true,
    windowsVerbatimArguments: how.windowsVerbatimArguments,
  });
  if (child.stdin) {
    child.stdin.on('error', () => {}); // EPIPE when the child exits before reading all input
    if (options.input !== undefined) child.stdin.end(options.input);
  }
  return child;
}

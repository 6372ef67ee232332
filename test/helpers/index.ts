import { type ChildProcess, execFileSync, type SpawnOptions, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import crossSpawn from 'cross-spawn';
import { expect, onTestFinished } from 'vitest';

/** A diagnostic that must be one line (and end with a newline): its text, trimmed. */
export function oneLine(stderr: Buffer): string {
  const text = stderr.toString();
  expect(text.endsWith('\n') && text.trimEnd().split('\n').length === 1, text).toBe(true);
  return text.trimEnd();
}

/** A fresh temp dir for this test, removed when it finishes. */
export function testDir(prefix = 'shimkit-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: Buffer;
  pid: number;
}

/**
 * Spawn a process that is force-killed when the test finishes if it still runs.
 * Through cross-spawn, as the README advises for `.cmd` shims on Windows.
 */
export function spawnTracked(
  command: string,
  args: readonly string[],
  options: SpawnOptions = {},
): ChildProcess {
  const child = crossSpawn(command, [...args], { stdio: ['pipe', 'pipe', 'pipe'], ...options });
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return child;
}

/** Resolve with the exit status and all output of a tracked child. */
export function completion(child: ChildProcess): Promise<Exit> {
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) =>
      resolve({
        code,
        signal,
        stdout: Buffer.concat(stdout),
        stderr: Buffer.concat(stderr),
        pid: child.pid ?? -1,
      }),
    );
  });
}

/** The first line a child prints, parsed as JSON (a fixture's report); rejects if it exits first. */
export function firstJsonLine<T>(child: ChildProcess): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let text = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes('\n')) resolve(JSON.parse(text.slice(0, text.indexOf('\n'))));
    });
    child.on('close', () => reject(new Error(`fixture exited before reporting: ${text}`)));
  });
}

/** Run a command to completion (stdin closed unless `input` is given). */
export function runCommand(
  command: string,
  args: readonly string[] = [],
  options: SpawnOptions & { input?: string | Buffer } = {},
): Promise<Exit> {
  const { input, ...spawnOptions } = options;
  const child = spawnTracked(command, args, spawnOptions);
  const done = completion(child);
  child.stdin?.on('error', () => {});
  child.stdin?.end(input);
  return done;
}

/**
 * A bash pipeline that runs `command` only once the reader on its other end
 * has closed its stdin (the reader then creates the file `flag`), so what
 * the command writes into the pipe meets no reader at all: EPIPE, and
 * SIGPIPE for a real command. Waits at most 30 s for the reader (a loaded machine can starve it).
 */
export function intoClosedPipe(command: string, flag: string): string {
  const wait = `i=0; until [ -e '${flag}' ] || [ $i -ge 3000 ]; do sleep 0.01; i=$((i+1)); done`;
  return `rm -f '${flag}'; { ${wait}; ${command}; } | { exec 0<&-; : >'${flag}'; }`;
}

/**
 * Whether a pid is a live process and not a zombie. (Where PID 1 does not
 * reap orphans, as in many containers, a killed grandchild stays a zombie.)
 */
export function isAlive(pid: number): boolean {
  if (!isRunning(pid)) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Whether a pid is a live process. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

let python: string | undefined;

/**
 * The real python3 binary (`sys.executable`), resolved once per test file: a
 * version manager's `python3` (pyenv's shim is a bash script) can cost 300 ms a
 * start, which a test that spawns python a few dozen times cannot afford.
 */
export function python3(): string {
  python ??=
    spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], {
      encoding: 'utf8',
    }).stdout?.trim() || 'python3';
  return python;
}

let mountNamespace: string[] | null | undefined;

/**
 * The `unshare` options that give a command a private mount namespace in
 * which it may mount a tmpfs (for a real full disk): as root, or through a
 * user namespace (`-r`); undefined where neither works. Probed once.
 */
export function privateMountArgs(): string[] | undefined {
  if (mountNamespace === undefined) {
    const base = ['-m', '--propagation', 'private'];
    const probe = (args: string[]) =>
      spawnSync('unshare', [...args, 'sh', '-c', 'mount -t tmpfs -o size=64k tmpfs /mnt'], {
        stdio: 'ignore',
      }).status === 0;
    mountNamespace = [base, [...base, '-r']].find(probe) ?? null;
  }
  return mountNamespace ?? undefined;
}

/** Another local user to test with: root runs the suite here, and `useradd -M shimkit-other` made it. */
export const OTHER_USER = 'shimkit-other';

/** Whether this process can run commands as OTHER_USER (`runuser -u`): root, and the user exists. */
export const canSwitchUser: boolean = (() => {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('runuser', ['-u', OTHER_USER, '--', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

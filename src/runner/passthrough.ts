import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { delimiter, dirname, resolve } from 'node:path';
import { fnv1a } from '../internal/fnv.js';
import { addLeakCookie, LEAK_COOKIE_VAR } from '../internal/leak-cookie.js';
import { LEAK_ORIGIN_VAR } from '../internal/leak-registry.js';
import { MAX_TIMER_MS } from '../internal/limits.js';
import { killTree } from '../process/tree.js';
import { type WindowsSpawn, windowsSpawn } from '../process/windows-command.js';
import type { Claim } from '../queue/claim.js';
import { formatCommand } from '../queue/format.js';
import { label } from './diagnostics.js';
import { PASSED_THROUGH, type PassedThrough, passedThrough } from './env.js';
import { writeAll } from './output.js';

/**
 * Passthrough and spies (requirement MB-15): the call runs the real command
 * of the mock's name, found on the call's PATH after every shimkit shim of
 * that name (so a shim dir on PATH twice, or another mock of the same name,
 * never recurses), with the call's argv, stdin, stdout and stderr, and ends
 * as it ended.
 */

/** The real command behind the mock: the first `name` on PATH that is not a shimkit shim. */
export function findReal(
  name: string,
  pathValue: string,
  platform = process.platform,
): string | undefined {
  const names = platform === 'win32' ? withExtensions(name) : [name];
  for (const dir of pathValue.split(delimiter)) {
    if (dir === '') continue;
    // Absolute, so a relative entry such as "." cannot send spawn back to a PATH search.
    for (const file of names.map((n) => resolve(dir, n))) {
      if (runnable(file, platform) && !isShim(file)) return file;
    }
  }
  return undefined;
}

function withExtensions(name: string): string[] {
  if (/\.[^.\\/]+$/.test(name)) return [name];
  const exts = (process.env.PATHEXT ?? '.COM;.EXE;.BAT;.CMD').split(';').filter(Boolean);
  return exts.map((ext) => `${name}${ext.toLowerCase()}`);
}

function runnable(file: string, platform: NodeJS.Platform): boolean {
  try {
    const stat = statSync(file);
    return stat.isFile() && (platform === 'win32' || (stat.mode & 0o111) !== 0);
  } catch {
    return false;
  }
}

/** Whether `file` is a shim shimkit wrote (its second line says so). */
function isShim(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const head = Buffer.alloc(512);
    const n = readSync(fd, head, 0, head.length, 0);
    return head.subarray(0, n).includes('shimkit mock binary');
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * The real command's path, or why there is none. A call that loops back is
 * refused: one the real command of this same mock made with the same argv
 * as a call it passed through before (a wrapper such as ccache or distcc
 * runs "the next gcc on PATH that is not itself", which is the shim, with
 * the arguments it got), or this mock's MAX_SELF_DEPTH-th in one chain. A
 * real command that runs itself with other arguments (`node -e` starting
 * `node -p`, a script calling itself once) is served. The real command runs
 * with the chain one link longer in its env.
 */
export function locateReal(claim: Claim): string | RealEnd {
  const { name } = claim.config;
  const command = formatCommand(name, claim.record.argv);
  const chain = passedThrough();
  const mock = dirname(claim.genDir);
  const args = argvHash(claim.record.argv);
  const mine = chain.filter((link) => link.mock === mock);
  const loop = mine.find((link) => link.args === args);
  if (loop || mine.length >= MAX_SELF_DEPTH) {
    const via = (loop ?? mine[mine.length - 1]) as PassedThrough;
    const why = loop
      ? `with the same arguments, and found this mock instead of the real one (${chain.length} passthrough${chain.length === 1 ? '' : 's'} deep), so passing it through would never end`
      : `and found this mock instead of the real one, the ${MAX_SELF_DEPTH + 1}th time in one chain, so it is taken for a loop`;
    return {
      kind: 'missing',
      message: `${label(claim)} (${command}) was made by the real command it passes through to, ${via.real}, which ran "${name}" again ${why}. A wrapper such as ccache or distcc runs the next "${name}" on PATH that is not itself: tell it where the real ${name} is (ccache: CCACHE_PATH), or mock the command the wrapper runs instead.`,
    };
  }
  const pathValue = process.env.PATH ?? process.env.Path ?? '';
  const real = findReal(name, pathValue);
  if (real !== undefined) {
    process.env[PASSED_THROUGH] = JSON.stringify([...chain, { mock, real, args }]);
    // The leak sanitizer's cookie (LK-01): the call's own, else the one open when the mock was made.
    if (claim.config.leakCookie !== undefined)
      addLeakCookie(process.env, { [LEAK_COOKIE_VAR]: claim.config.leakCookie });
    // …and the mock, by its record's id, for what it leaves once its parents are gone.
    if (claim.config.leakOrigin !== undefined)
      process.env[LEAK_ORIGIN_VAR] = String(claim.config.leakOrigin);
    return real;
  }
  return {
    kind: 'missing',
    message: `${label(claim)} (${command}) passes through to the real ${name}, but there is none on PATH after the mock (searched ${pathValue || 'nothing: PATH is empty'}). Install it, or script this call instead of passing it through.`,
  };
}

/**
 * How to start the real command at `real` with `argv`. On Windows a `.cmd`
 * or `.bat` (npm installs commands so) runs through cmd.exe, as Node will
 * not spawn one without a shell; it is named by its full path, so cmd.exe
 * cannot find the mock again on PATH.
 */
export function realSpawn(
  real: string,
  argv: readonly string[],
  platform: NodeJS.Platform = process.platform,
): WindowsSpawn {
  if (platform !== 'win32') return { file: real, args: [...argv], windowsVerbatimArguments: false };
  return windowsSpawn(real, argv, real, process.env); // the call's ComSpec
}

/** How many calls of one mock one passthrough chain may hold before another is taken for a loop. */
const MAX_SELF_DEPTH = 8;

/** FNV-1a of the argv (NUL-joined), and its length: a loop repeats it exactly. */
function argvHash(argv: readonly string[]): string {
  const text = argv.join('\0');
  return `${fnv1a(text).toString(16)}-${text.length}`;
}

/** How the real command ended, or why it could not run. */
export type RealEnd =
  | { kind: 'exit'; code: number; out?: Buffer; err?: Buffer }
  | { kind: 'signal'; signal: NodeJS.Signals; out?: Buffer; err?: Buffer }
  | { kind: 'timeout' }
  | { kind: 'missing'; message: string };

/** What record mode keeps of one call's output, in memory, for the cassette. */
const MAX_RECORDED_BYTES = 1024 ** 3;

/** How long a killed real command may take to be gone before the call ends without it. */
export const KILL_GRACE_MS = 1000;

/**
 * Run the real command with the call's argv and stdio: stdin, stdout and
 * stderr are the call's own (inherited), so bytes and timing pass as they
 * are; stdin that was captured for the record is fed to it instead. It stays
 * in the call's process group (a sandbox ends the program under test by its
 * group), so at the deadline its whole tree is killed, not only the command:
 * a grandchild holding the caller's stdout would keep the caller waiting.
 */
export function runReal(
  claim: Claim,
  deadline: number,
  stdin: Buffer | undefined,
): Promise<RealEnd> {
  const real = locateReal(claim);
  if (typeof real !== 'string') return Promise.resolve(real);
  const { name } = claim.config;
  const cannotStart = (error: Error): RealEnd => ({
    kind: 'missing',
    message: `${label(claim)} could not start the real ${name} at ${real}: ${error.message}.`,
  });
  const keep = claim.config.recordOutput === true;
  const how = realSpawn(real, claim.record.argv);
  let child: ChildProcess;
  try {
    child = spawn(how.file, how.args, {
      windowsVerbatimArguments: how.windowsVerbatimArguments,
      stdio: [stdin ? 'pipe' : 'inherit', keep ? 'pipe' : 'inherit', keep ? 'pipe' : 'inherit'],
      windowsHide: true,
    });
  } catch (error) {
    return Promise.resolve(cannotStart(error as Error)); // EINVAL, a bad argument: thrown at once
  }
  // Recording passes the output on as it comes, and keeps it for the
  // cassette. A caller's reader that has gone (a closed pipe) ends the real
  // command as it would have ended writing there: by SIGPIPE.
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let kept = 0;
  let tooMuch = false;
  const pass = (fd: 1 | 2, parts: Buffer[]) => (chunk: Buffer) => {
    kept += chunk.length;
    if (kept > MAX_RECORDED_BYTES && !tooMuch) {
      tooMuch = true;
      if (child.pid !== undefined) void killTree(child.pid);
    }
    if (!tooMuch) parts.push(chunk);
    let written = true;
    try {
      written = writeAll(fd, chunk, deadline);
    } catch {
      // Stalled until the deadline (a reader that stopped reading): the timer ends the call.
    }
    if (!written) child.kill('SIGPIPE');
  };
  child.stdout?.on('data', pass(1, out));
  child.stderr?.on('data', pass(2, err));
  if (stdin) {
    child.stdin?.on('error', () => {}); // EPIPE: it ended without reading all of it
    child.stdin?.end(stdin);
  }
  const forwarding = forwardSignals(child);
  return new Promise<RealEnd>((resolve) => {
    let timedOut = false;
    const timer = setTimeout(
      () => {
        timedOut = true;
        const { pid } = child;
        if (pid === undefined || child.exitCode !== null || child.signalCode !== null) {
          return resolve({ kind: 'timeout' });
        }
        // One it cannot kill (setuid, EPERM) does not hold the call past its deadline for good.
        void killTree(pid).then(() =>
          setTimeout(() => resolve({ kind: 'timeout' }), KILL_GRACE_MS),
        );
      },
      Math.min(Math.max(1, deadline - Date.now()), MAX_TIMER_MS),
    );
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve(cannotStart(error));
    });
    // Killed at the deadline: its end is enough (nothing it wrote is passed on).
    // Ended by a signal the call was sent: so is the call, even while a
    // grandchild still holds a pipe of the recording open.
    child.once('exit', (code, signal) => {
      if (timedOut) resolve({ kind: 'timeout' });
      else if (forwarding.sent()) {
        clearTimeout(timer);
        resolve(signal ? { kind: 'signal', signal } : { kind: 'exit', code: code ?? 0 });
      }
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (timedOut) return resolve({ kind: 'timeout' });
      if (tooMuch) {
        return resolve({
          kind: 'missing',
          message: `${label(claim)} (recording) passed through to the real ${name}, which wrote more than ${MAX_RECORDED_BYTES / 1024 ** 3} GiB: record mode keeps a call's output in memory for the cassette, so it was stopped. Record a smaller call, or script this one.`,
        });
      }
      const output = keep ? { out: Buffer.concat(out), err: Buffer.concat(err) } : {};
      if (signal) resolve({ kind: 'signal', signal, ...output });
      else resolve({ kind: 'exit', code: code ?? 0, ...output });
    });
  }).finally(forwarding.stop);
}

/** Signals sent to a call that passes through, passed on to the real command. */
const FORWARDED: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGHUP'];

/**
 * SIGTERM or SIGHUP sent to the call (its pid is the runner's) reaches the
 * real command too, which ends as it ends by it; the call then ends as the
 * real command ended. (SIGINT is left alone: a terminal's Ctrl+C reaches the
 * whole process group, the real command included, and a second one is
 * taken by many programs as "stop now".) Returns how to stop: the runner's
 * own end by that signal needs the default back.
 */
export function forwardSignals(child: ChildProcess): { stop: () => void; sent: () => boolean } {
  let sent = false;
  const forwarded = FORWARDED.map((signal) => {
    const forward = () => {
      sent = true;
      child.kill(signal);
    };
    process.on(signal, forward);
    return () => process.off(signal, forward);
  });
  return {
    stop: () => {
      for (const off of forwarded.splice(0)) off();
    },
    sent: () => sent,
  };
}

import { type ChildProcess, spawn } from 'node:child_process';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { describeValue } from '../internal/describe.js';
import { InvalidOptionError } from '../internal/errors.js';
import { onProcessExit } from '../internal/exit-cleanup.js';
import { addLeakCookie } from '../internal/leak-cookie.js';
import { checkOptionKeys } from '../internal/options.js';
import { SpawnError } from '../process/errors.js';
import { Keepalive } from '../process/keepalive.js';
import { killTreeSync, signalGroup } from '../process/kill.js';
import { findCommand } from '../process/which.js';
import { windowsSpawn } from '../process/windows-command.js';
import type { Way } from './faults.js';
import { FrameProxy } from './proxy.js';
import type { FrameProxyOptions } from './proxy-options.js';
import { resolveSettings, SETTING_KEYS } from './settings.js';
import { StreamPair } from './stream-pair.js';

/** Options of {@link proxyStdio}: those of `createFrameProxy` without addresses, and how to start the child. */
export interface StdioProxyOptions extends Omit<FrameProxyOptions, 'listen' | 'upstream'> {
  /** The child's working dir. @default process.cwd() */
  cwd?: string;
  /** The child's environment (plus a leak sanitizer scope's `SHIMKIT_LEAK_COOKIE`, LK-01). @default process.env */
  env?: NodeJS.ProcessEnv;
  /**
   * The child's stderr: kept (its last 64 KiB, for `stderrTail()`), passed to
   * this process's stderr, or dropped. It is always read, so a child that
   * logs a lot never blocks on it.
   * @default 'tail'
   */
  stderr?: 'tail' | 'inherit' | 'ignore';
}

/** How the child ended. */
export interface StdioExit {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
}

/** How long a direction's end waits for the child's exit to say how it ended. */
const EXIT_GRACE_MS = 1000;

/** The most of a child's stderr `stderrTail()` keeps. */
const STDERR_TAIL = 64 * 1024;

/**
 * A child process whose stdin and stdout run through a frame proxy: what the
 * test writes to `stdin` reaches the child as c2s frames, what the child
 * writes reaches `stdout` as s2c frames, with the faults applied. Create it
 * with {@link proxyStdio}.
 *
 * Like a TestProcess, it does not keep Node alive by itself (requirement
 * SP-10): only while `exited` or `close()` is awaited, or after `ref()`.
 * Waits with a deadline (`createFrameReader(…).waitForFrames()`,
 * `proxy.waitForFrames()`) keep it alive while they wait; a promise of your
 * own on `stdout` events does not: call `ref()` for that.
 */
export class StdioProxy {
  /** The proxy in the middle: `stats()`, `waitForFrames()`, `hold()`, `timeline()`, `setFaults()`, `sever()`… */
  readonly proxy: FrameProxy<string>;
  /** Write requests here: they reach the child's stdin through the proxy. */
  readonly stdin: Writable;
  /** The child's stdout, after the proxy: read replies here (e.g. with `createFrameReader`). */
  readonly stdout: Readable;
  readonly pid: number;
  readonly #child: ChildProcess;
  readonly #keepalive: Keepalive;
  readonly #exited: Promise<StdioExit>;
  readonly #forgetExit: () => void;
  readonly #stderr: Buffer[] = [];
  #stderrBytes = 0;
  #exit: StdioExit | undefined;
  #ref: (() => void) | undefined;

  /** @internal Use `proxyStdio()`. */
  static start(
    child: ChildProcess,
    proxy: FrameProxy<string>,
    stderr: 'tail' | 'inherit' | 'ignore',
  ): StdioProxy {
    return new StdioProxy(child, proxy, stderr);
  }

  private constructor(
    child: ChildProcess,
    proxy: FrameProxy<string>,
    stderr: 'tail' | 'inherit' | 'ignore',
  ) {
    this.#child = child;
    this.proxy = proxy;
    this.pid = child.pid as number;
    const toChild = new PassThrough();
    const fromChild = new PassThrough();
    this.stdin = toChild;
    this.stdout = fromChild;
    child.stderr?.on('data', (chunk: Buffer) => {
      if (stderr === 'inherit') process.stderr.write(chunk);
      else if (stderr === 'tail') this.#keepStderr(chunk);
    });
    // The test's side is one stream pair, the child's another: a connection, as the proxy sees it.
    const testSide = StreamPair.of(toChild, fromChild);
    const childSide = StreamPair.of(child.stdout as Readable, child.stdin as Writable);
    // A child that exits while requests are still being written gives EPIPE: that is its exit, not the test's error.
    childSide.on('error', () => {});
    testSide.on('error', () => {});
    proxy.attach(testSide, childSide, (way) => this.#wayDone(way));
    this.#keepalive = new Keepalive(child);
    // 'exit', not 'close': a grandchild may hold the child's stdout open long after.
    this.#exited = new Promise((resolve) => {
      child.once('exit', (exitCode, signal) => {
        this.#exit = { exitCode, signal };
        this.unref();
        this.#forgetExit();
        resolve(this.#exit);
      });
    });
    this.#forgetExit = onProcessExit(() => killGroup(child, 'SIGKILL'));
  }

  /**
   * Resolves with how the child ended, once it has exited. While it is
   * awaited, the child keeps Node alive.
   */
  get exited(): Promise<StdioExit> {
    return this.#exit ? this.#exited : this.#keepalive.during(this.#exited);
  }

  /** How the child ended, once it has. */
  get exit(): StdioExit | undefined {
    return this.#exit;
  }

  /** The last 64 KiB of the child's stderr (with the default `stderr: 'tail'`). */
  stderrTail(): string {
    return Buffer.concat(this.#stderr, this.#stderrBytes).toString('utf8');
  }

  /** Keep Node alive while the child runs, like `server.ref()` (for a script whose whole job is this exchange). */
  ref(): this {
    if (!this.#exit) this.#ref ??= this.#keepalive.hold();
    return this;
  }

  /** Undo `ref()`: the child no longer keeps Node alive (the default). */
  unref(): this {
    this.#ref?.();
    this.#ref = undefined;
    return this;
  }

  /** Send the child a signal (SIGTERM by default). */
  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (!this.#exit) this.#child.kill(signal);
  }

  /**
   * End the child's stdin, give it `graceMs` (default 2000) to exit, then
   * SIGKILL it and whatever it started (its process group on POSIX; on
   * Windows its tree, by `taskkill /T /F`, while it still runs); close the
   * proxy. Resolves with how the child ended.
   */
  async close(options: { graceMs?: number } = {}): Promise<StdioExit> {
    const graceMs = options.graceMs ?? 2000;
    const release = this.#keepalive.hold();
    try {
      if (!this.#exit) {
        this.stdin.end();
        const timer = setTimeout(() => killGroup(this.#child, 'SIGKILL'), graceMs);
        await this.#exited;
        clearTimeout(timer);
      }
      killGroup(this.#child, 'SIGKILL'); // grandchildren that outlived it
      for (const stream of [this.#child.stdin, this.#child.stdout, this.#child.stderr]) {
        stream?.destroy();
      }
      await this.proxy.close();
    } finally {
      release();
    }
    return this.#exit as StdioExit;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /**
   * A direction can carry nothing more (the child closed its stdout or its
   * stdin, or exited): the proxy's waits on it that are not met reject, saying
   * how the child ended. Its exit is often reported just after its pipes close:
   * it is waited for a moment before the message settles for "closed its stdout".
   */
  #wayDone(way: Way): void {
    const end = (how: string) => this.proxy.endWaits(way, how);
    if (this.#exit) {
      end(this.#howEnded(this.#exit));
      return;
    }
    const closed =
      way === 's2c'
        ? `the child (pid ${this.pid}) closed its stdout`
        : this.stdin.writableEnded
          ? 'stdin was ended'
          : `the child (pid ${this.pid}) closed its stdin`;
    const timer = setTimeout(() => {
      this.#child.off('exit', exited);
      end(closed);
    }, EXIT_GRACE_MS);
    timer.unref(); // a wait with a deadline keeps Node alive; this alone does not
    const exited = () => {
      clearTimeout(timer);
      end(this.#howEnded(this.#exit as StdioExit));
    };
    this.#child.once('exit', exited);
  }

  #howEnded(exit: StdioExit): string {
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.exitCode}`;
    return `the child (pid ${this.pid}) ${how}`;
  }

  #keepStderr(chunk: Buffer): void {
    this.#stderr.push(chunk);
    this.#stderrBytes += chunk.length;
    while (this.#stderrBytes - (this.#stderr[0]?.length ?? 0) >= STDERR_TAIL) {
      this.#stderrBytes -= (this.#stderr.shift() as Buffer).length;
    }
  }
}

/**
 * Signal the child's process group (POSIX: it leads one). Windows has no
 * groups: SIGKILL ends the child's tree with `taskkill /T /F` while the
 * child still runs (synchronously, bounded; the child alone if taskkill
 * cannot), other signals go to the child alone.
 */
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  const running = child.exitCode === null && child.signalCode === null;
  if (process.platform === 'win32') {
    if (running && signal === 'SIGKILL' && child.pid !== undefined) {
      killTreeSync(child.pid, 'win32', process.env); // the test process's SystemRoot
    } else if (running) child.kill(signal);
    return;
  }
  if (child.pid !== undefined && signalGroup(child.pid, signal)) return;
  if (running) child.kill(signal);
}

/** @internal How {@link proxyStdio} starts `command`. */
export interface StdioSpawn {
  file: string;
  args: string[];
  windowsVerbatimArguments: boolean;
  /** POSIX: its own process group, so close() also ends what it started. */
  detached: boolean;
}

/**
 * @internal The spawn of `command`: as given on POSIX; on Windows, where
 * `file` is what the child's PATH holds for it, a `.cmd` or `.bat` (npm's
 * shims, a mock binary) runs through cmd.exe with a command line that gives
 * it exactly `args`, as `spawnProcess` does (windows-command.ts). A command
 * not found (`file` undefined) is spawned as given, so the error is the OS's.
 */
export function stdioSpawn(
  command: string,
  args: readonly string[],
  file: string | undefined,
  platform: NodeJS.Platform = process.platform,
): StdioSpawn {
  const plain = { file: command, args: [...args], windowsVerbatimArguments: false };
  if (platform !== 'win32') return { ...plain, detached: true };
  if (file === undefined) return { ...plain, detached: false };
  return { ...windowsSpawn(command, args, file, process.env), detached: false };
}

/**
 * Start `command` with its stdin and stdout behind a frame proxy (PX-14):
 * for an MCP or LSP server, or any program that speaks frames over stdio.
 * Resolves once the child has started; rejects with a `SpawnError` if it
 * cannot be, and an `InvalidOptionError` for a bad option.
 *
 * @example
 * await using server = await proxyStdio('python3', ['server.py'], {
 *   framing: 'lines',
 *   faults: [{ action: 'drop', direction: 's2c', frame: 1 }],
 * });
 * const replies = createFrameReader(server.stdout, { framing: 'lines' });
 * server.stdin.write(encodeFrame(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }), 'lines'));
 */
export async function proxyStdio(
  command: string,
  args: readonly string[] = [],
  options: StdioProxyOptions = {},
): Promise<StdioProxy> {
  const where = 'proxyStdio()';
  if (typeof command !== 'string' || command === '') {
    throw new InvalidOptionError(
      `Expected the command of ${where} to be a non-empty string, got ${describeValue(command)}.`,
    );
  }
  if (!Array.isArray(args) || args.some((a) => typeof a !== 'string')) {
    throw new InvalidOptionError(
      `Expected the args of ${where} to be an array of strings, got ${describeValue(args)}.`,
    );
  }
  const { cwd, env, ...proxyOptions } = checkOptionKeys(
    options,
    [...SETTING_KEYS, 'cwd', 'env', 'stderr'],
    where,
  );
  const stderr = proxyOptions.stderr ?? 'tail';
  if (stderr !== 'tail' && stderr !== 'inherit' && stderr !== 'ignore') {
    throw new InvalidOptionError(
      `Expected the \`stderr\` option of ${where} to be "tail", "inherit" or "ignore", got ${describeValue(stderr)}.`,
    );
  }
  delete proxyOptions.stderr;
  const settings = resolveSettings(proxyOptions, where);
  const found =
    process.platform === 'win32'
      ? findCommand(command, env ?? process.env, cwd ?? process.cwd(), 'win32')
      : undefined;
  const how = stdioSpawn(command, args, found);
  const child = spawn(how.file, how.args, {
    cwd,
    // An explicit env gets the leak sanitizer's cookie (LK-01); without one, process.env has it.
    env: env === undefined ? undefined : addLeakCookie({ ...env }),
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: how.detached,
    windowsHide: true,
    windowsVerbatimArguments: how.windowsVerbatimArguments,
  });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (error) => reject(new SpawnError(command, cwd ?? process.cwd(), error)));
  });
  const described = `stdio:${[command, ...args].join(' ')}`;
  const address = { kind: 'stdio' as const, path: described };
  const proxy = FrameProxy.create<string>({
    server: undefined,
    listen: address,
    upstream: address,
    ...settings,
  });
  return StdioProxy.start(child, proxy, stderr);
}

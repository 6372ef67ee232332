import { type ChildProcess, spawn } from 'node:child_process';
import { Duplex, PassThrough, type Readable, type Writable } from 'node:stream';
import { describeValue } from '../internal/describe.js';
import { InvalidOptionError } from '../internal/errors.js';
import { onProcessExit } from '../internal/exit-cleanup.js';
import { checkOptionKeys } from '../internal/options.js';
import { SpawnError } from '../process/errors.js';
import { FrameProxy, type FrameProxyOptions, resolveSettings } from './proxy.js';

/** Options of {@link proxyStdio}: those of `createFrameProxy` without addresses, and how to start the child. */
export interface StdioProxyOptions extends Omit<FrameProxyOptions, 'listen' | 'upstream'> {
  /** The child's working dir. @default process.cwd() */
  cwd?: string;
  /** The child's environment. @default process.env */
  env?: NodeJS.ProcessEnv;
}

/** How the child ended. */
export interface StdioExit {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * A child process whose stdin and stdout run through a frame proxy: what the
 * test writes to `stdin` reaches the child as c2s frames, what the child
 * writes reaches `stdout` as s2c frames, with the faults applied. Create it
 * with {@link proxyStdio}.
 */
export class StdioProxy {
  /** The proxy in the middle: `stats()`, `waitForFrames()`, `hold()`, `timeline()`, `setFaults()`, `sever()`… */
  readonly proxy: FrameProxy<string>;
  /** Write requests here: they reach the child's stdin through the proxy. */
  readonly stdin: Writable;
  /** The child's stdout, after the proxy: read replies here (e.g. with `createFrameReader`). */
  readonly stdout: Readable;
  /** The child's stderr, as it wrote it. */
  readonly stderr: Readable;
  readonly pid: number;
  /** Resolves when the child has exited and its streams are closed. */
  readonly exited: Promise<StdioExit>;
  readonly #child: ChildProcess;
  readonly #forgetExit: () => void;
  #exit: StdioExit | undefined;

  /** @internal Use `proxyStdio()`. */
  static start(child: ChildProcess, proxy: FrameProxy<string>): StdioProxy {
    return new StdioProxy(child, proxy);
  }

  private constructor(child: ChildProcess, proxy: FrameProxy<string>) {
    this.#child = child;
    this.proxy = proxy;
    this.pid = child.pid as number;
    const toChild = new PassThrough();
    const fromChild = new PassThrough();
    this.stdin = toChild;
    this.stdout = fromChild;
    this.stderr = child.stderr as Readable;
    // The test's side is one stream pair, the child's another: a connection, as the proxy sees it.
    const testSide = Duplex.from({ readable: toChild, writable: fromChild });
    const childSide = Duplex.from({
      readable: child.stdout as Readable,
      writable: child.stdin as Writable,
    });
    // A child that exits while requests are still being written gives EPIPE: that is its exit, not the test's error.
    childSide.on('error', () => {});
    testSide.on('error', () => {});
    proxy.attach(testSide, childSide);
    this.exited = new Promise((resolve) => {
      child.once('close', (exitCode, signal) => {
        this.#exit = { exitCode, signal };
        this.#forgetExit();
        resolve(this.#exit);
      });
    });
    this.#forgetExit = onProcessExit(() => {
      if (!this.#exit) child.kill('SIGKILL');
    });
  }

  /** Whether the child has exited. */
  get exit(): StdioExit | undefined {
    return this.#exit;
  }

  /** Send the child a signal (SIGTERM by default). */
  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (!this.#exit) this.#child.kill(signal);
  }

  /**
   * End the child's stdin, give it `graceMs` (default 2000) to exit, then
   * SIGKILL it; close the proxy. Resolves with how the child ended.
   */
  async close(options: { graceMs?: number } = {}): Promise<StdioExit> {
    const graceMs = options.graceMs ?? 2000;
    if (!this.#exit) {
      this.stdin.end();
      const timer = setTimeout(() => this.#child.kill('SIGKILL'), graceMs);
      await this.exited;
      clearTimeout(timer);
    }
    await this.proxy.close();
    return this.#exit as StdioExit;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
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
    [
      'framing',
      'maxFrameBytes',
      'faults',
      'seed',
      'clock',
      'queueLimitBytes',
      'bandwidth',
      'record',
      'cwd',
      'env',
    ],
    where,
  );
  const settings = resolveSettings(proxyOptions, where);
  const child = spawn(command, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
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
  return StdioProxy.start(child, proxy);
}

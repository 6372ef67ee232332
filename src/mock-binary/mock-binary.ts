import { chmodSync, existsSync, renameSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describeValue } from '../internal/describe.js';
import {
  CallAssertionError,
  DisposedError,
  InvalidOptionError,
  UnusedResponsesError,
  WaitTimeoutError,
} from '../internal/errors.js';
import { DEFAULT_WAIT_MS } from '../internal/limits.js';
import { checkOptionKeys } from '../internal/options.js';
import type { Env } from '../internal/path-env.js';
import { tryUnlink, writeFileAtomic } from '../queue/atomic.js';
import { stateError } from '../queue/errors.js';
import {
  countCalls,
  liveGeneration,
  queueLength,
  RecordCache,
  readSnapshot,
} from '../queue/reader.js';
import { describeArg, mismatch } from '../queue/route.js';
import type { ArgMatcher, MockMatch, WireArg } from '../queue/types.js';
import { appendToQueue, createInstance, resetState, retire } from '../queue/writer.js';
import { callsOf, notDoneReport } from './calls.js';
import { writeCassette } from './cassette.js';
import { formatCalls } from './diagnostics.js';
import { type HeldCall, LiveChannel, type LiveHandler } from './live.js';
import type { ResolvedOptions } from './options.js';
import { toWireArgs, toWireResponse } from './options.js';
import { shTools } from './sh-tools.js';
import { renderShim, type ShimTarget, shimFileName } from './shim.js';
import type { MockCall, MockResponse, WaitForCallsOptions } from './types.js';

/** The shim's fast path, when the mock's config has one (see sh-tools.ts). */
function fastPathOf(config: ResolvedOptions['config']): ShimTarget['fast'] {
  return config.sh ? { config, tools: shTools() } : undefined;
}

/** What a mock needs from the bin dir that holds it (see MockBinDir). */
export interface MockHost {
  /** The shim dir. */
  readonly dir: string;
  /** The temp dir holding the shim dir and every mock's state. */
  readonly root: string;
  /** The Node and runner the shim runs. */
  shimFiles(nodePath: string): { nodePath: string; runnerPath: string };
  env(base?: Env): Env;
  install(): unknown;
  uninstall(): unknown;
  dispose(): Promise<void>;
}

/**
 * A fake command on PATH whose calls are scripted one by one and recorded.
 * Create it with `createMockBinary(name)` or `createMockBinDir().mock(name)`.
 *
 * @example
 * await using git = createMockBinary('git');
 * git.enqueue([{ stdout: 'main\n' }, { exitCode: 1, stderr: 'rejected\n' }]);
 * spawnSync('git', ['branch', '--show-current'], { env: git.env() });
 * expect(git.lastCall()?.argv).toEqual(['branch', '--show-current']);
 */
export class MockBinary {
  /** The command name. */
  readonly name: string;
  /** Absolute path of the shim (`…/git`, or `…/git.cmd` for Windows). */
  readonly path: string;
  /** The dir to put first on PATH. */
  readonly dir: string;
  /** This mock's private state dir (queue, claims, call records). */
  readonly stateDir: string;
  readonly #bin: MockHost;
  readonly #forget: () => void;
  readonly #records = new RecordCache();
  readonly #strict: boolean;
  readonly #platform: NodeJS.Platform;
  readonly #recordTo: string | undefined;
  #liveChannel: LiveChannel | undefined;
  #ownsBin = false;
  #disposed = false;

  /** @internal Use `createMockBinary()` or `bin.mock()`. */
  static create(
    bin: MockHost,
    name: string,
    options: ResolvedOptions,
    forget: () => void,
    instance?: string,
  ): MockBinary {
    const path = join(bin.dir, shimFileName(name, options.platform));
    // A state dir of its own that no earlier mock of this name had (MB-18),
    // with its responses (already validated); the shim appears last and
    // whole, so it is never run half-made or ahead of its state.
    const stateDir = createInstance(join(bin.root, 'state'), name, options.config, instance);
    try {
      if (options.responses.length > 0) {
        appendToQueue(stateDir, options.responses);
      }
      const shim = renderShim(
        {
          name,
          ...bin.shimFiles(options.nodePath),
          nodeFlags: options.nodeFlags,
          stateDir,
          shimDir: bin.dir,
          root: bin.root,
          fast: fastPathOf(options.config),
        },
        options.platform,
      );
      writeFileAtomic(path, shim, 0o700); // an exclusive, randomly named temp file renamed into place
    } catch (error) {
      retire(stateDir);
      throw stateError(error, path, 'test');
    }
    return new MockBinary(bin, name, { ...options, stateDir }, forget);
  }

  /**
   * @internal A mock another process made in a dir that outlives it
   * (`openMockBinDir()`): its shim and state are on disk already.
   */
  static reopen(
    bin: MockHost,
    name: string,
    init: { stateDir: string; strict: boolean; platform: NodeJS.Platform },
    forget: () => void,
  ): MockBinary {
    return new MockBinary(bin, name, { ...init, recordTo: undefined }, forget);
  }

  private constructor(
    bin: MockHost,
    name: string,
    init: {
      stateDir: string;
      strict: boolean;
      platform: NodeJS.Platform;
      recordTo: string | undefined;
    },
    forget: () => void,
  ) {
    this.name = name;
    this.#bin = bin;
    this.#forget = forget;
    this.#strict = init.strict;
    this.#platform = init.platform;
    this.#recordTo = init.recordTo;
    this.dir = bin.dir;
    this.path = join(bin.dir, shimFileName(name, init.platform));
    this.stateDir = init.stateDir;
  }

  /**
   * Make the command fail to start, as a missing (`'ENOENT'`) or
   * non-executable (`'EACCES'`) one does (requirement MB-25): the shim is
   * moved aside, or loses its exec bit, until `makeAvailable()`. The caller's
   * spawn then fails with that code only if no other command of this name is
   * on its PATH (a search goes on past a missing or non-executable file): use
   * a sandbox made with `commands: 'mocked-only'`, or `env({ PATH: '' })`.
   * Nothing is recorded: no call starts. `'EACCES'` is POSIX only.
   *
   * @example
   * git.makeUnavailable('ENOENT');
   * await expect(run('git', ['status'], { sandbox: sb })).rejects.toThrow(CommandNotFoundError);
   */
  makeUnavailable(code: 'ENOENT' | 'EACCES'): this {
    this.#assertLive();
    if (code !== 'ENOENT' && code !== 'EACCES') {
      throw new InvalidOptionError(
        `Expected makeUnavailable() on mock "${this.name}" to get 'ENOENT' (not found) or 'EACCES' (not executable), got ${describeValue(code)}.`,
      );
    }
    if (code === 'EACCES' && this.#platform === 'win32') {
      throw new InvalidOptionError(
        `makeUnavailable('EACCES') on mock "${this.name}": Windows has no exec bit to take away; use 'ENOENT'.`,
      );
    }
    this.makeAvailable();
    try {
      if (code === 'ENOENT') renameSync(this.path, this.#asidePath());
      else chmodSync(this.path, 0o600);
    } catch (error) {
      throw stateError(error, this.path, 'test');
    }
    return this;
  }

  /** Undo `makeUnavailable()`: the command starts again. */
  makeAvailable(): this {
    this.#assertLive();
    try {
      if (existsSync(this.#asidePath())) renameSync(this.#asidePath(), this.path);
      chmodSync(this.path, 0o700);
    } catch (error) {
      throw stateError(error, this.path, 'test');
    }
    return this;
  }

  #asidePath(): string {
    return join(this.dir, `.${basename(this.path)}.unavailable`);
  }

  /**
   * Answer calls no queued response is left for from a function in this
   * process (requirement MB-16): it gets the call (`argv`, `cwd`, `env`,
   * `index`) and returns a response, or undefined for none. A matching queued
   * response wins. `handle(undefined)` stops. The caller must run while the
   * test awaits it (`run()`, `spawn`, `execFile`): `execFileSync` blocks the
   * event loop that answers, and the call then ends at the mock timeout.
   *
   * @example
   * git.handle(async (call) => (call.argv[0] === 'rev-parse' ? { stdout: `${sha}\n` } : undefined));
   */
  handle(handler: LiveHandler | undefined): this {
    this.#assertLive();
    this.#live().setHandler(handler);
    return this;
  }

  /**
   * Hold the next call that fits `match` (any call without one): it runs,
   * waiting, until `release(response?)`; `waitReceived()` resolves when it
   * arrives. A barrier for race tests: hold two calls, release them in
   * reverse order. A hold never released ends its call at the mock timeout.
   *
   * @example
   * const first = git.hold({ args: ['push', 'a'] });
   * const second = git.hold({ args: ['push', 'b'] });
   * const both = Promise.all([run('git', ['push', 'a'], o), run('git', ['push', 'b'], o)]);
   * await first.waitReceived(); await second.waitReceived();
   * second.release(); first.release({ exitCode: 1 });
   */
  hold(match?: MockMatch): HeldCall {
    this.#assertLive();
    return this.#live().addHold(match);
  }

  #live(): LiveChannel {
    this.#liveChannel ??= new LiveChannel(this.name, () => liveGeneration(this.stateDir));
    return this.#liveChannel;
  }

  /** @internal Dispose the bin dir along with this mock (for `createMockBinary`). */
  ownBinDir(): this {
    this.#ownsBin = true;
    return this;
  }

  /**
   * Add scripted responses to the end of the queue; calls claim them in order.
   * Every response is validated first: on an unknown key or a wrong type
   * nothing is enqueued and an `InvalidResponseError` says what to fix.
   */
  enqueue(responses: MockResponse | readonly MockResponse[]): this {
    this.#assertLive();
    const list = Array.isArray(responses) ? responses : [responses];
    const wire = list.map((response, i) =>
      toWireResponse(
        response,
        Array.isArray(responses)
          ? `response [${i}] passed to enqueue() on mock "${this.name}"`
          : `the response passed to enqueue() on mock "${this.name}"`,
      ),
    );
    if (wire.length > 0) appendToQueue(this.stateDir, wire);
    return this;
  }

  /** Alias of {@link enqueue}. */
  onCall(responses: MockResponse | readonly MockResponse[]): this {
    return this.enqueue(responses);
  }

  /** Every call so far, in the order they reached the queue (see `MockCall.index`). */
  calls(): MockCall[] {
    this.#assertLive();
    return callsOf(readSnapshot(this.stateDir, this.#records, { queue: false }));
  }

  /** Number of calls so far (running ones included). */
  callCount(): number {
    this.#assertLive();
    return countCalls(this.stateDir);
  }

  /** The most recent call, if any. */
  lastCall(): MockCall | undefined {
    return this.calls().at(-1);
  }

  /**
   * Call number `n` (1-based, as in `MockCall.index` and the diagnostics).
   * Throws a `CallAssertionError` listing the calls if there is none.
   */
  nthCall(n: number): MockCall {
    if (!Number.isInteger(n) || n < 1) {
      throw new InvalidOptionError(
        `Expected the call number of nthCall() on mock "${this.name}" to be an integer >= 1 (calls count from 1), got ${describeValue(n)}.`,
      );
    }
    const calls = this.calls();
    const call = calls[n - 1];
    if (!call) {
      throw new CallAssertionError(
        `mock "${this.name}" has no call #${n}: it was called ${calls.length} time${calls.length === 1 ? '' : 's'}.\n${formatCalls(this.name, calls)}`,
      );
    }
    return call;
  }

  /**
   * Throw a `CallAssertionError` unless call `n` (1-based) had exactly these
   * arguments; each may be a string, a RegExp or `any()`, as in `match.args`.
   * The message names the first difference and shows both argv lists.
   *
   * @example
   * git.assertNthCall(2, ['push', 'origin', /^release\//]);
   */
  assertNthCall(n: number, args: readonly ArgMatcher[]): void {
    const call = this.nthCall(n);
    let expected: WireArg[];
    try {
      expected = toWireArgs(args, 'the arguments passed to assertNthCall()');
    } catch (error) {
      throw new InvalidOptionError((error as Error).message);
    }
    const why = mismatch({ args: expected }, { argv: call.argv, cwd: call.cwd, env: {} });
    if (why === undefined) return;
    throw new CallAssertionError(
      `mock "${this.name}" call #${n} had other arguments: ${why}\n` +
        `  expected: [${expected.map(describeArg).join(', ')}]\n` +
        `  got:      ${JSON.stringify(call.argv)}\n${formatCalls(this.name, this.calls())}`,
    );
  }

  /** Number of responses queued since creation or the last `reset()` (used ones included). */
  queuedCount(): number {
    this.#assertLive();
    return queueLength(this.stateDir);
  }

  /**
   * Resolve with the calls once at least `n` have finished (or started, with
   * `until: 'started'`); reject with a `WaitTimeoutError` after `timeoutMs`.
   */
  async waitForCalls(n: number, options: WaitForCallsOptions = {}): Promise<MockCall[]> {
    const where = `mock "${this.name}".waitForCalls()`;
    if (typeof options === 'number') {
      throw new InvalidOptionError(
        `The second argument of ${where} is an options object: pass { timeoutMs: ${options} }.`,
      );
    }
    const { timeoutMs = DEFAULT_WAIT_MS, until = 'finished' } = checkOptionKeys(
      options,
      ['timeoutMs', 'until'],
      where,
    );
    if (!Number.isInteger(n) || n < 0) {
      throw new InvalidOptionError(
        `Expected the count passed to ${where} to be an integer >= 0, got ${describeValue(n)}.`,
      );
    }
    if (!Number.isFinite(timeoutMs) || timeoutMs < 0) {
      throw new InvalidOptionError(
        `Expected the \`timeoutMs\` option of ${where} to be a number >= 0, got ${describeValue(timeoutMs)}.`,
      );
    }
    if (until !== 'started' && until !== 'finished') {
      throw new InvalidOptionError(
        `Expected the \`until\` option of ${where} to be "started" or "finished", got ${describeValue(until)}.`,
      );
    }
    const deadline = Date.now() + timeoutMs;
    let pause = 2;
    for (;;) {
      this.#assertLive();
      // Counted from the records readable (a record the sh shim is writing counts once written).
      if (until === 'started' && countCalls(this.stateDir) >= n) {
        const calls = this.calls();
        if (calls.length >= n) return calls;
      }
      if (until === 'finished') {
        const calls = this.calls();
        if (calls.filter((c) => c.status !== 'running').length >= n) return calls;
      }
      if (Date.now() >= deadline) {
        throw new WaitTimeoutError(
          `mock "${this.name}": waited ${timeoutMs} ms for ${n} call${n === 1 ? '' : 's'} to ${until === 'started' ? 'start' : 'finish'}; ${formatCalls(this.name, this.calls())}`,
        );
      }
      await new Promise((done) => setTimeout(done, Math.min(pause, deadline - Date.now())));
      pause = Math.min(pause * 2, 50);
    }
  }

  /**
   * Throw an `UnusedResponsesError` if a queued response was never used or a
   * call found no response, with a report that lists the recorded calls.
   */
  assertDone(): void {
    this.#assertLive();
    const report = notDoneReport(this.name, readSnapshot(this.stateDir, this.#records));
    if (report) throw new UnusedResponsesError(report);
  }

  /**
   * Forget every response and call. A call still in flight finishes in the old
   * generation: it can neither claim from nor record into the new queue.
   */
  reset(): this {
    this.#assertLive();
    resetState(this.stateDir);
    this.#liveChannel?.endHolds('reset()');
    this.#liveChannel?.refresh(); // the new generation listens too
    return this;
  }

  /** A copy of `base` (default `process.env`) with the shim dir first on PATH. Never mutates. */
  env(base?: Env): Env {
    this.#assertLive();
    return this.#bin.env(base);
  }

  /** Put the shim dir first on `process.env.PATH`; `uninstall()` takes it off again. */
  install(): this {
    this.#assertLive();
    this.#bin.install();
    return this;
  }

  uninstall(): this {
    this.#bin.uninstall();
    return this;
  }

  /**
   * Uninstall and delete the mock (and its temp dir, if it has one of its
   * own). A call still running finishes without a trace: its state dir is
   * moved away at once, so nothing it writes can reach a later mock. A
   * `strict` mock then throws `UnusedResponsesError` if it was not done
   * (see `assertDone()`): it is removed either way.
   */
  async dispose(): Promise<void> {
    if (this.#disposed) return;
    if (this.#ownsBin) {
      await this.#bin.dispose();
      return;
    }
    // Removed whatever happens: a cassette that cannot be written, or a
    // strict report, is thrown after.
    let report: string | undefined;
    let failure: unknown;
    try {
      report = this.beforeDispose();
    } catch (error) {
      failure = error;
    }
    this.markDisposed();
    this.#forget();
    tryUnlink(this.path);
    tryUnlink(this.#asidePath());
    retire(this.stateDir);
    if (failure) throw failure;
    if (report) throw new UnusedResponsesError(report);
  }

  /**
   * @internal What `dispose()` does before the mock goes: write the cassette
   * (record mode), and for a strict mock say why it is not done (undefined
   * when it is, or when it is not strict).
   */
  beforeDispose(): string | undefined {
    if (this.#disposed) return undefined;
    if (this.#recordTo) {
      const { calls } = readSnapshot(this.stateDir, this.#records);
      // Nothing recorded (a test that failed before its first call): no cassette, so `auto` records again next time.
      if (calls.some((c) => c.source === 'passthrough'))
        writeCassette(this.#recordTo, this.name, calls);
    }
    if (!this.#strict) return undefined;
    try {
      return notDoneReport(this.name, readSnapshot(this.stateDir, this.#records));
    } catch {
      return undefined; // its state is gone already: nothing to report on
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }

  /** @internal */
  markDisposed(): void {
    this.#disposed = true;
    this.#liveChannel?.endHolds('dispose()');
    this.#liveChannel?.stop();
  }

  #assertLive(): void {
    if (this.#disposed) throw new DisposedError(`The mock binary "${this.name}"`);
  }
}

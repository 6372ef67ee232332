// MockBinary, the class users see: its lifecycle (create, reopen, reset,
// dispose), install/env and the live handle/hold channel, with the public
// TSDoc; the work is delegated to host.ts (making the mock on disk, enqueue),
// call-queries.ts (calls, waits, assertions, the not-done report),
// availability.ts (makeUnavailable) and dispose.ts (cassette, strict report,
// removal), which see the mock through small views (CallView, ShimFile).
import { join } from 'node:path';
import { DisposedError, UnusedResponsesError } from '../internal/errors.js';
import type { Env } from '../internal/path-env.js';
import { countCalls, liveGeneration, queueLength, RecordCache } from '../queue/reader.js';
import type { ArgMatcher, MockMatch } from '../queue/types.js';
import { resetState } from '../queue/writer.js';
import { makeAvailable, makeUnavailable, type ShimFile } from './availability.js';
import {
  assertNthCallOf,
  type CallView,
  callsFrom,
  notDoneReportOf,
  nthCallFrom,
  waitForCallsOf,
} from './call-queries.js';
import { type DisposeSettings, removeMockFiles, reportBeforeDispose } from './dispose.js';
import { enqueueResponses, type MockHost, type MockInit, makeInstance } from './host.js';
import { mockLeakHolds } from './leak-holds.js';
import { type HeldCall, LiveChannel, type LiveHandler } from './live.js';
import type { ResolvedOptions } from './options.js';
import { shimFileName } from './shim.js';
import type { MockCall, MockResponse, WaitForCallsOptions } from './types.js';

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
  readonly #settings: DisposeSettings;
  #liveChannel: LiveChannel | undefined;
  #ownsBin = false;
  #disposed = false;
  /** What call-queries.ts and availability.ts read of this mock. */
  readonly #view: CallView & ShimFile;

  /** @internal Use `createMockBinary()` or `bin.mock()`. */
  static create(
    bin: MockHost,
    name: string,
    options: ResolvedOptions,
    forget: () => void,
    instance?: string,
  ): MockBinary {
    const stateDir = makeInstance(bin, name, options, instance);
    return new MockBinary(bin, name, { ...options, stateDir }, forget);
  }

  /**
   * @internal A mock another process made in a dir that outlives it
   * (`openMockBinDir()`): its shim and state are on disk already.
   */
  static reopen(
    bin: MockHost,
    name: string,
    init: Omit<MockInit, 'recordTo'>,
    forget: () => void,
  ): MockBinary {
    return new MockBinary(bin, name, { ...init, recordTo: undefined }, forget);
  }

  private constructor(bin: MockHost, name: string, init: MockInit, forget: () => void) {
    this.name = name;
    this.#bin = bin;
    this.#forget = forget;
    this.#settings = { recordTo: init.recordTo, strict: init.strict };
    this.dir = bin.dir;
    this.path = join(bin.dir, shimFileName(name, init.platform));
    this.stateDir = init.stateDir;
    this.#view = {
      name,
      stateDir: this.stateDir,
      path: this.path,
      dir: this.dir,
      platform: init.platform,
      records: this.#records,
      assertLive: () => this.#assertLive(),
    };
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
    makeUnavailable(this.#view, code);
    return this;
  }

  /** Undo `makeUnavailable()`: the command starts again. */
  makeAvailable(): this {
    this.#assertLive();
    makeAvailable(this.#view);
    return this;
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
    this.#bin.leakAs('mock binary', this.name);
    return this;
  }

  /**
   * Add scripted responses to the end of the queue; calls claim them in order.
   * Every response is validated first: on an unknown key or a wrong type
   * nothing is enqueued and an `InvalidResponseError` says what to fix.
   */
  enqueue(responses: MockResponse | readonly MockResponse[]): this {
    this.#assertLive();
    enqueueResponses(this.stateDir, this.name, responses);
    return this;
  }

  /** Alias of {@link enqueue}. */
  onCall(responses: MockResponse | readonly MockResponse[]): this {
    return this.enqueue(responses);
  }

  /** Every call so far, in the order they reached the queue (see `MockCall.index`). */
  calls(): MockCall[] {
    return callsFrom(this.#view);
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
    return nthCallFrom(this.#view, n);
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
    assertNthCallOf(this.#view, n, args);
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
  waitForCalls(n: number, options: WaitForCallsOptions = {}): Promise<MockCall[]> {
    return waitForCallsOf(this.#view, n, options);
  }

  /**
   * Throw an `UnusedResponsesError` if a queued response was never used or a
   * call found no response, with a report that lists the recorded calls.
   */
  assertDone(): void {
    this.#assertLive();
    const report = notDoneReportOf(this.#view);
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
    removeMockFiles(this.#view, this.stateDir);
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
    return reportBeforeDispose(this.#view, this.#settings);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }

  /**
   * @internal What the leak sanitizer reports of an undisposed mock (LK-02):
   * its calls still running, and what it was never asked for.
   */
  leakHolds(): string[] {
    if (this.#disposed) return [];
    return mockLeakHolds({
      name: this.name,
      stateDir: this.stateDir,
      records: this.#records,
      strict: this.#settings.strict,
      live: this.#liveChannel,
    });
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

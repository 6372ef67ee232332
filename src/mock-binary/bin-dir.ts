import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeValue } from '../internal/describe.js';
import { DisposedError, InvalidOptionError, UnusedResponsesError } from '../internal/errors.js';
import { type Tracked, trackLeak, untrackLeak } from '../internal/leak-registry.js';
import { memoryTmpDir } from '../internal/memory-tmp.js';
import { checkOptionKeys, optionError, resolvePlatform } from '../internal/options.js';
import { assertOwnDir } from '../internal/owner.js';
import { runnerPath } from '../internal/package-files.js';
import { type Env, envWithPathEntry } from '../internal/path-env.js';
import { removeTree } from '../internal/remove-tree.js';
import { createTempDir, type TempDir } from '../internal/temp-dir.js';
import { stateError } from '../queue/errors.js';
import { instanceId } from '../queue/writer.js';
import { installOnPath } from './install.js';
import { MockBinary } from './mock-binary.js';
import { validateBinaryName } from './name.js';
import { checkTmpDir, resolveOptions } from './options.js';
import {
  assertOwnRoot,
  claimRoot,
  DirRaceError,
  entryKeys,
  MockBeingMadeError,
  noSuchMock,
  readEntry,
  readMarker,
  removeEntry,
  writeEntry,
  writeMarker,
} from './persist.js';
import type { MockBinaryOptions } from './types.js';
import { shimDirOf, WindowsFiles } from './windows-layout.js';

/** Options of `createMockBinDir()`. */
export interface MockBinDirOptions {
  /**
   * Which shims to write: POSIX `sh` scripts, or `.cmd` files for `'win32'`.
   * @default process.platform
   */
  platform?: NodeJS.Platform;
  /**
   * Parent dir for the temp dir. Left out, on Linux with `TMPDIR` unset, it
   * is a tmpfs with at least 1 GiB free where shims can run
   * (`$XDG_RUNTIME_DIR` when it is this user's, else `/dev/shm`): the two
   * files a shell-served call creates cost a fraction there of what they
   * cost on a disk. `SHIMKIT_TMPFS=0` turns that off.
   * @default a tmpfs as above, else os.tmpdir()
   */
  tmpDir?: string;
  /**
   * Use this dir as the root instead of a new temp dir: it is created (0700),
   * or must be an empty dir of this user's (made 0700). A symbolic link, or a
   * dir another user owns (who could swap the shims in it), is refused with a
   * `ShimkitError` (`ERR_SHIMKIT_NOT_OWNED`) naming the owner; pass the real
   * dir instead of a link. Shims go in `<dir>/bin` (put that on PATH), and
   * another process can reopen it with {@link openMockBinDir}. `dispose()`
   * deletes it; so does the exit of this process, unless `keep`. Not with
   * `tmpDir`.
   * @default a new temp dir in `tmpDir`
   * @example
   * const bin = createMockBinDir({ dir: join(testDir, 'mocks'), keep: true });
   */
  dir?: string;
  /**
   * Let the dir outlive this process: neither the exit cleanup nor the
   * leftover sweep removes it (delete it yourself, or `dispose()` it from
   * any process with `openMockBinDir(dir)`). A kept dir can be reopened by
   * dir from another process, as `shimkit mock` / `shimkit enqueue` do.
   * @default false
   * @example
   * const bin = createMockBinDir({ keep: true }); // bin.root survives the process
   */
  keep?: boolean;
}

/**
 * One temp dir holding several mock binaries, to put on PATH as one entry.
 *
 * @example
 * await using bin = createMockBinDir();
 * const git = bin.mock('git');
 * const docker = bin.mock('docker', { onExhausted: 'fail' });
 * spawnSync('my-cli', ['deploy'], { env: bin.env() });
 */
export class MockBinDir {
  /** The shim dir: put it first on PATH. */
  readonly dir: string;
  /** The temp dir that holds the shim dir and every mock's state. */
  readonly root: string;
  readonly platform: NodeJS.Platform;
  readonly #temp: TempDir;
  readonly #mocks = new Map<string, MockBinary>();
  readonly #windows: WindowsFiles | undefined;
  /** Whether the root outlives its process and lists its mocks in `mocks/` (see persist.ts). */
  readonly #persistent: boolean;
  #uninstall: (() => void) | undefined;
  #disposed = false;
  /** The leak sanitizer's record of it (LK-02), when made in a sanitizer scope. */
  #leak: Tracked | undefined;

  constructor(options: MockBinDirOptions = {}) {
    const where = 'createMockBinDir()';
    checkOptionKeys(options, ['platform', 'tmpDir', 'dir', 'keep'], where);
    if ((options as { [opened]?: unknown })[opened]) {
      const root = (options as { [opened]: { root: string } })[opened].root;
      this.platform = resolvePlatform(options.platform, 'openMockBinDir()');
      this.#temp = { path: root, remove: () => claimedRemove(root), keep: () => {} };
      this.root = root;
      this.dir = shimDirOf(root, this.platform);
      this.#windows = this.platform === 'win32' ? new WindowsFiles(root) : undefined;
      this.#persistent = true;
      return;
    }
    this.platform = resolvePlatform(options.platform, where);
    const keep = options.keep ?? false;
    if (typeof keep !== 'boolean') throw optionError(where, 'keep', 'true or false', keep);
    if (options.dir !== undefined) {
      if (typeof options.dir !== 'string' || options.dir === '' || options.dir.includes('\0')) {
        throw optionError(where, 'dir', 'a dir path', options.dir);
      }
      if (options.tmpDir !== undefined) {
        throw new InvalidOptionError(
          `${where}: pass \`dir\` (the root itself) or \`tmpDir\` (where a new temp root goes), not both.`,
        );
      }
    }
    // Not chosen: a tmpfs where there is one (see memoryTmpDir), for the shell-served calls' file creations.
    const tmpDir =
      checkTmpDir(options.tmpDir, where) ??
      (this.platform === 'win32' ? undefined : memoryTmpDir());
    const parent = tmpDir ?? tmpdir();
    try {
      this.#temp =
        options.dir !== undefined
          ? claimRoot(options.dir, keep, where)
          : createTempDir('shimkit', tmpDir);
    } catch (error) {
      throw stateError(error, options.dir ?? parent, 'test');
    }
    if (keep) this.#temp.keep();
    this.#persistent = keep || options.dir !== undefined;
    this.root = this.#temp.path;
    this.dir = shimDirOf(this.root, this.platform);
    this.#windows = this.platform === 'win32' ? new WindowsFiles(this.root) : undefined;
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      // In a root that was there before, make sure nobody else made the shim dir first.
      if (options.dir !== undefined) assertOwnDir(this.dir, `The shim dir of ${where}`);
      if (this.#persistent) writeMarker(this.root, this.platform);
    } catch (error) {
      if (error instanceof DirRaceError) {
        // Another process made this dir a mock dir meanwhile: it is theirs, leave it whole.
        this.#temp.keep();
        throw error;
      }
      this.#temp.remove();
      throw stateError(error, this.dir, 'test');
    }
    // A dir kept on purpose (`keep`, or a `dir` of the caller's) outlives its object by design:
    // it is not the leak sanitizer's to judge (LK-02).
    this.#leak = this.#persistent
      ? undefined
      : trackLeak('mock bin dir', this.root, {
          holds: () => [...this.#mocks.values()].flatMap((mock) => mock.leakHolds()),
          dispose: () => this.disposeSync(),
        });
  }

  /** @internal A mock made by `createMockBinary()` owns this dir: the sanitizer names the mock, not the dir. */
  leakAs(kind: 'mock binary', name: string): void {
    if (this.#leak) {
      this.#leak.kind = kind;
      this.#leak.name = name;
    }
  }

  /** @internal Reopen a persistent root (see {@link openMockBinDir}). */
  static open(dir: string): MockBinDir {
    const { root, platform } = readMarker(dir);
    assertOwnRoot(root, shimDirOf(root, platform));
    return new MockBinDir({ platform, [opened]: { root } } as MockBinDirOptions);
  }

  /** Add a mock binary to this dir. Names must be unique within the dir. */
  mock(name: string, options: Omit<MockBinaryOptions, 'tmpDir' | 'platform'> = {}): MockBinary {
    this.#assertLive();
    validateBinaryName(name, this.platform);
    const resolved = resolveOptions(name, options, this.platform); // type and key checks first
    if (this.#leak !== undefined) resolved.config.leakOrigin = this.#leak.id;
    if ('tmpDir' in options || 'platform' in options) {
      throw new InvalidOptionError(
        `bin.mock(${JSON.stringify(name)}): \`tmpDir\` and \`platform\` belong to createMockBinDir(), not to one mock.`,
      );
    }
    const key = this.#key(name);
    if (this.#uninstall) refuseInstalledTwice(this, name);
    if (this.#mocks.has(key)) {
      throw new InvalidOptionError(
        `This bin dir already has a mock named ${JSON.stringify(name)}; use that one, or reset() it.`,
      );
    }
    if (!this.#persistent) {
      const mock = MockBinary.create(this, name, resolved, () => this.#drop(key));
      this.#mocks.set(key, mock);
      return mock;
    }
    // The name is taken on disk first (exclusively: two processes making the
    // same mock cannot both win), then the mock is made under it.
    const instance = instanceId();
    const entry = { name, state: `${name}.${instance}`, strict: resolved.strict };
    if (!writeEntry(this.root, key, entry)) refuseTaken(this, name);
    let mock: MockBinary;
    try {
      mock = MockBinary.create(this, name, resolved, () => this.#drop(key), instance);
    } catch (error) {
      removeEntry(this.root, key);
      throw error;
    }
    this.#mocks.set(key, mock);
    return mock;
  }

  /**
   * The mock named `name` in this dir. In a dir made with `dir` or
   * `keep: true`, that includes mocks other processes added (`shimkit mock`).
   * Throws a `ShimkitError` (`ERR_SHIMKIT_NOT_MOCK_DIR`) naming the mocks there
   * and the nearest name if there is none.
   *
   * @example
   * const git = openMockBinDir(dir).get('git');
   * git.assertDone();
   */
  get(name: string): MockBinary {
    this.#assertLive();
    validateBinaryName(name, this.platform);
    const key = this.#key(name);
    const mock = this.#mocks.get(key) ?? (this.#persistent ? this.#load(key) : undefined);
    if (!mock)
      throw noSuchMock(
        this.root,
        name,
        this.mocks().map((m) => m.name),
      );
    return mock;
  }

  /** A mock recorded in `mocks/` that this object has not met yet. */
  #load(key: string): MockBinary | undefined {
    const entry = readEntry(this.root, key);
    if (!entry) return undefined;
    const stateDir = join(this.root, 'state', entry.state);
    if (!existsSync(stateDir)) {
      throw new MockBeingMadeError(
        `mock "${entry.name}" in ${this.root} has no state dir (${stateDir}): was it deleted by hand? Remove ${join(this.root, 'mocks', `${key}.json`)} and make the mock again.`,
      );
    }
    const mock = MockBinary.reopen(
      this,
      entry.name,
      { stateDir, strict: entry.strict === true, platform: this.platform },
      () => this.#drop(key),
    );
    this.#mocks.set(key, mock);
    return mock;
  }

  #drop(key: string): void {
    this.#mocks.delete(key);
    if (this.#persistent && !this.#disposed) removeEntry(this.root, key);
  }

  /** @internal The Node and runner a shim in this dir runs (copies inside the root on Windows). */
  shimFiles(nodePath: string): { nodePath: string; runnerPath: string } {
    if (!this.#windows) return { nodePath, runnerPath: runnerPath() };
    return { nodePath: this.#windows.node(nodePath), runnerPath: this.#windows.runner() };
  }

  /** The mocks in this dir (in a dir made with `dir` or `keep: true`, also those other processes added), sorted by name for such a dir. */
  mocks(): MockBinary[] {
    if (this.#persistent && !this.#disposed) {
      for (const key of entryKeys(this.root)) {
        if (this.#mocks.has(key)) continue;
        try {
          this.#load(key);
        } catch (error) {
          // One being made right now (its entry comes before its state dir) is not listed yet.
          if (!(error instanceof MockBeingMadeError)) throw error;
        }
      }
      return [...this.#mocks.entries()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([, mock]) => mock);
    }
    return [...this.#mocks.values()];
  }

  /**
   * A copy of `base` (default `process.env`) with this dir first on PATH.
   * Never mutates. Throws `DisposedError` once disposed: the dir is gone, and
   * a PATH into it would quietly run the real command.
   */
  env(base: Env = process.env): Env {
    this.#assertLive();
    if (typeof base !== 'object' || base === null || Array.isArray(base)) {
      throw new InvalidOptionError(
        `Expected the env passed to env() to be an object such as process.env, got ${describeValue(base)}.`,
      );
    }
    return envWithPathEntry(base, this.dir, this.platform);
  }

  /**
   * Put this dir first on `process.env.PATH` until `uninstall()` or
   * `dispose()`. PATH is shared by everything in the process, so this
   * refuses a name another installed mock already provides (two concurrent
   * tests would answer each other's calls): give each program its mock's
   * `env()` instead.
   */
  install(): this {
    this.#assertLive();
    if (this.#uninstall) return this;
    for (const mock of this.#mocks.values()) refuseInstalledTwice(this, mock.name);
    this.#uninstall = installOnPath(this.dir);
    installed.add(this);
    return this;
  }

  /** Take this dir off `process.env.PATH` again (other entries are untouched). */
  uninstall(): this {
    this.#uninstall?.();
    this.#uninstall = undefined;
    installed.delete(this);
    return this;
  }

  /** @internal Whether this dir is installed and has a mock of `name`. */
  provides(name: string): boolean {
    return this.#uninstall !== undefined && this.#mocks.has(this.#key(name));
  }

  #key(name: string): string {
    return this.platform === 'win32' ? name.toLowerCase() : name;
  }

  /**
   * Uninstall and delete the temp dir with every mock in it. Then, if a
   * `strict` mock in it was not done, throw `UnusedResponsesError` with the
   * report of each such mock.
   */
  async dispose(): Promise<void> {
    const reports: string[] = [];
    let failure: unknown;
    if (!this.#disposed) {
      for (const mock of this.#mocks.values()) {
        try {
          const report = mock.beforeDispose();
          if (report) reports.push(report);
        } catch (error) {
          failure ??= error;
        }
      }
    }
    this.disposeSync(); // whatever the mocks said
    if (failure) throw failure;
    if (reports.length > 0) throw new UnusedResponsesError(reports.join('\n'));
  }

  /** @internal The synchronous core of `dispose()`. */
  disposeSync(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    untrackLeak(this.#leak);
    this.uninstall();
    for (const mock of this.#mocks.values()) mock.markDisposed();
    this.#mocks.clear();
    try {
      this.#temp.remove();
    } catch (error) {
      throw stateError(error, this.root, 'test');
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }

  #assertLive(): void {
    if (this.#disposed) throw new DisposedError(`The mock bin dir ${this.dir}`);
  }
}

/** Bin dirs currently on `process.env.PATH` through `install()`. */
const installed = new Set<MockBinDir>();

function refuseInstalledTwice(bin: MockBinDir, name: string): void {
  for (const other of installed) {
    if (other === bin || !other.provides(name)) continue;
    throw new InvalidOptionError(
      `Cannot install mock "${name}" (${bin.dir}): another installed mock already provides "${name}" (${other.dir}). process.env.PATH is shared by everything in this process, so one would answer the other's calls (as two concurrent tests would). Pass each program under test its mock's env() instead of install(), or uninstall() the other first.`,
    );
  }
}

/** Several mocks in one dir. See {@link MockBinDir}. */
export function createMockBinDir(options?: MockBinDirOptions): MockBinDir {
  return new MockBinDir(options);
}

/**
 * Reopen a bin dir made with `createMockBinDir({ dir })` or `{ keep: true }`
 * (or by `shimkit mock NAME --dir D`), in this or any later process: its
 * mocks come back by name with `get(name)` and `mocks()`, with their queues
 * and recorded calls, and can be enqueued to, asserted on, reset and
 * disposed. Nothing removes the dir when this process exits; `dispose()`
 * deletes it. Throws a `ShimkitError` with code `ERR_SHIMKIT_NOT_MOCK_DIR`
 * for a dir that is not such a bin dir, saying how to make one.
 *
 * @example
 * // process 1: createMockBinDir({ dir, keep: true }).mock('git');
 * // process 2:
 * const git = openMockBinDir(dir).get('git');
 * git.enqueue({ stdout: 'main\n' });
 */
export function openMockBinDir(dir: string): MockBinDir {
  if (typeof dir !== 'string' || dir === '' || dir.includes('\0')) {
    throw new InvalidOptionError(
      `Expected the dir passed to openMockBinDir() to be a dir path, got ${describeValue(dir)}.`,
    );
  }
  return MockBinDir.open(dir);
}

/** The private key of the options that `MockBinDir.open` passes to the constructor. */
const opened = Symbol('opened');

function claimedRemove(root: string): void {
  removeTree(root);
}

function refuseTaken(bin: MockBinDir, name: string): never {
  throw new InvalidOptionError(
    `${bin.root} already has a mock named ${JSON.stringify(name)} (made by another process, or earlier): use it (openMockBinDir(dir).get(${JSON.stringify(name)}), or from a shell \`shimkit enqueue ${bin.root} ${name} …\`), or dispose of it first.`,
  );
}

import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describeValue } from '../internal/describe.js';
import { DisposedError, InvalidOptionError, UnusedResponsesError } from '../internal/errors.js';
import { checkOptionKeys, resolvePlatform } from '../internal/options.js';
import { runnerPath } from '../internal/package-files.js';
import { type Env, envWithPathEntry } from '../internal/path-env.js';
import { createTempDir, type TempDir } from '../internal/temp-dir.js';
import { stateError } from '../queue/errors.js';
import { installOnPath } from './install.js';
import { MockBinary } from './mock-binary.js';
import { validateBinaryName } from './name.js';
import { checkTmpDir, resolveOptions } from './options.js';
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
   * Parent dir for the temp dir.
   * @default os.tmpdir()
   */
  tmpDir?: string;
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
  #uninstall: (() => void) | undefined;
  #disposed = false;

  constructor(options: MockBinDirOptions = {}) {
    checkOptionKeys(options, ['platform', 'tmpDir'], 'createMockBinDir()');
    this.platform = resolvePlatform(options.platform, 'createMockBinDir()');
    const parent = checkTmpDir(options.tmpDir, 'createMockBinDir()') ?? tmpdir();
    try {
      this.#temp = createTempDir('shimkit', options.tmpDir);
    } catch (error) {
      throw stateError(error, parent, 'test');
    }
    this.root = this.#temp.path;
    this.dir = shimDirOf(this.root, this.platform);
    this.#windows = this.platform === 'win32' ? new WindowsFiles(this.root) : undefined;
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    } catch (error) {
      this.#temp.remove();
      throw stateError(error, this.dir, 'test');
    }
  }

  /** Add a mock binary to this dir. Names must be unique within the dir. */
  mock(name: string, options: Omit<MockBinaryOptions, 'tmpDir' | 'platform'> = {}): MockBinary {
    this.#assertLive();
    validateBinaryName(name, this.platform);
    const resolved = resolveOptions(name, options, this.platform); // type and key checks first
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
    const mock = MockBinary.create(this, name, resolved, () => this.#mocks.delete(key));
    this.#mocks.set(key, mock);
    return mock;
  }

  /** @internal The Node and runner a shim in this dir runs (copies inside the root on Windows). */
  shimFiles(nodePath: string): { nodePath: string; runnerPath: string } {
    if (!this.#windows) return { nodePath, runnerPath: runnerPath() };
    return { nodePath: this.#windows.node(nodePath), runnerPath: this.#windows.runner() };
  }

  /** The mocks in this dir. */
  mocks(): MockBinary[] {
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

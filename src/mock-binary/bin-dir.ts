import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DisposedError, InvalidOptionError } from '../internal/errors.js';
import { resolvePlatform } from '../internal/options.js';
import { type Env, envWithPathEntry } from '../internal/path-env.js';
import { createTempDir, type TempDir } from '../internal/temp-dir.js';
import { stateError } from '../queue/errors.js';
import { installOnPath } from './install.js';
import { MockBinary } from './mock-binary.js';
import { validateBinaryName } from './name.js';
import { resolveOptions } from './options.js';
import type { MockBinaryOptions } from './types.js';

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
  #uninstall: (() => void) | undefined;
  #disposed = false;

  constructor(options: MockBinDirOptions = {}) {
    this.platform = resolvePlatform(options.platform, 'createMockBinDir()');
    const parent = options.tmpDir ?? tmpdir();
    try {
      this.#temp = createTempDir('shimkit', options.tmpDir);
    } catch (error) {
      throw stateError(error, parent, 'test');
    }
    this.root = this.#temp.path;
    this.dir = join(this.root, 'bin');
    try {
      mkdirSync(this.dir, { mode: 0o700 });
    } catch (error) {
      this.#temp.remove();
      throw stateError(error, this.dir, 'test');
    }
  }

  /** Add a mock binary to this dir. Names must be unique within the dir. */
  mock(name: string, options: Omit<MockBinaryOptions, 'tmpDir' | 'platform'> = {}): MockBinary {
    this.#assertLive();
    validateBinaryName(name, this.platform);
    const resolved = resolveOptions(name, options); // type and key checks first
    if ('tmpDir' in options || 'platform' in options) {
      throw new InvalidOptionError(
        `bin.mock(${JSON.stringify(name)}): \`tmpDir\` and \`platform\` belong to createMockBinDir(), not to one mock.`,
      );
    }
    const key = this.platform === 'win32' ? name.toLowerCase() : name;
    if (this.#mocks.has(key)) {
      throw new InvalidOptionError(
        `This bin dir already has a mock named ${JSON.stringify(name)}; use that one, or reset() it.`,
      );
    }
    const mock = new MockBinary(this, name, { ...resolved, platform: this.platform }, () =>
      this.#mocks.delete(key),
    );
    this.#mocks.set(key, mock);
    return mock;
  }

  /** The mocks in this dir. */
  mocks(): MockBinary[] {
    return [...this.#mocks.values()];
  }

  /** A copy of `base` (default `process.env`) with this dir first on PATH. Never mutates. */
  env(base: Env = process.env): Env {
    return envWithPathEntry(base, this.dir, this.platform);
  }

  /** Put this dir first on `process.env.PATH` until `uninstall()` or `dispose()`. */
  install(): this {
    this.#assertLive();
    this.#uninstall ??= installOnPath(this.dir);
    return this;
  }

  /** Take this dir off `process.env.PATH` again (other entries are untouched). */
  uninstall(): this {
    this.#uninstall?.();
    this.#uninstall = undefined;
    return this;
  }

  /** Uninstall and delete the temp dir with every mock in it. */
  async dispose(): Promise<void> {
    this.disposeSync();
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

/** Several mocks in one dir. See {@link MockBinDir}. */
export function createMockBinDir(options?: MockBinDirOptions): MockBinDir {
  return new MockBinDir(options);
}

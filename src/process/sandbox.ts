import { mkdirSync, writeFileSync } from 'node:fs';
import { join, posix, win32 } from 'node:path';
import { describeValue } from '../internal/describe.js';
import { DisposedError, InvalidOptionError } from '../internal/errors.js';
import { addLeakCookie } from '../internal/leak-cookie.js';
import { counted, holdLines } from '../internal/leak-lines.js';
import { type Tracked, trackLeak, untrackLeak } from '../internal/leak-registry.js';
import { type Env, envWithPathEntry, pathDelimiter, pathKey } from '../internal/path-env.js';
import { redactEnv } from '../internal/secrets.js';
import { createTempDir, type TempDir } from '../internal/temp-dir.js';
import { buildSandboxEnv, gitConfigPath, homeDirs, setVar } from './env.js';
import { initGitRepo } from './git.js';
import { checkEnvKey, resolveSandboxOptions, type SandboxOptions } from './sandbox-options.js';
import { makeStrictPath, type StrictPath } from './strict-path.js';

export type { SandboxOptions } from './sandbox-options.js';

/** What `sandbox.diagnostics()` reports: the paths, and the env with secrets redacted. */
export interface SandboxDiagnostics {
  root: string;
  home: string;
  workspace: string;
  tmp: string;
  /** `sandbox.env()` with credential-like values and URL userinfo, queries and fragments removed. */
  env: Record<string, string>;
}

/** The mock names a `use()` entry brings: a `MockBinary`'s, or each of a `MockBinDir`'s mocks. */
function mockNames(entry: unknown): string[] {
  const e = entry as { name?: unknown; mocks?: unknown };
  if (typeof e?.name === 'string') return [e.name];
  if (typeof e?.mocks === 'function') {
    return (e.mocks as () => Array<{ name?: unknown }>)()
      .map((m) => m.name)
      .filter((n): n is string => typeof n === 'string');
  }
  return [];
}

/** What a sandbox knows of a process started in it (a `TestProcess`). */
export interface SandboxProcess {
  close(): Promise<unknown>;
  /** Whether it has not exited yet. */
  readonly running?: boolean;
  /** @internal `sleep 600 (pid 4242, 3.1 s)`, for the leak report. */
  leakLabel?(): string;
}

/** A dir to put on the sandbox PATH: a `MockBinary`, a `MockBinDir`, or an absolute path. */
export type SandboxPathEntry = string | { readonly dir: string };

/**
 * A private temp dir with a home, a workspace and a tmp dir, and an env that
 * sees only them (requirement SP-01…SP-03). Removed on `dispose()` or when the test
 * process exits, unless `keep: true`.
 *
 * @example
 * await using sb = createSandbox({ git: true });
 * await using git = createMockBinary('gh');
 * sb.use(git).setEnv('GH_TOKEN', 'test-token');
 * spawnSync('my-cli', ['release'], { cwd: sb.workspace, env: sb.env() });
 * console.log(String(sb.diagnostics())); // paths and env, GH_TOKEN redacted
 */
export class TestSandbox {
  /** The sandbox dir (private, mode 0700); home, workspace and tmp are inside it. */
  readonly root: string;
  /** `HOME` and `USERPROFILE`; the XDG dirs and an empty `.gitconfig` are inside it. */
  readonly home: string;
  /** An empty dir to run the program under test in (a repo with `git: true`). */
  readonly workspace: string;
  /** `TMPDIR`, `TMP` and `TEMP`. */
  readonly tmp: string;
  readonly platform: NodeJS.Platform;
  readonly #temp: TempDir;
  readonly #keep: boolean;
  readonly #base: Record<string, string>;
  /** setEnv/removeEnv in call order: the last call for a key is the last entry. */
  readonly #overrides = new Map<string, string | undefined>();
  /** Dirs from use(), most recent first. */
  readonly #pathDirs: string[] = [];
  #strictPath: StrictPath | undefined;
  readonly #processes = new Set<SandboxProcess>();
  #disposing: Promise<void> | undefined;
  /** The leak sanitizer's record of it (LK-02), when made in a sanitizer scope. */
  readonly #leak: Tracked | undefined;

  constructor(options: SandboxOptions = {}) {
    const resolved = resolveSandboxOptions(options);
    this.platform = resolved.platform;
    this.#keep = resolved.keep;
    this.#temp = createTempDir('shimkit-sandbox-', resolved.tmpDir);
    if (this.#keep) this.#temp.keep();
    this.root = this.#temp.path;
    this.home = join(this.root, 'home');
    this.workspace = join(this.root, 'workspace');
    this.tmp = join(this.root, 'tmp');
    try {
      for (const dir of [this.home, this.workspace, this.tmp]) mkdirSync(dir, { mode: 0o700 });
      for (const dir of Object.values(homeDirs(this.home, this.platform))) {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
      }
      writeFileSync(gitConfigPath(this.home), '', { mode: 0o600 });
      this.#base = buildSandboxEnv({
        platform: this.platform,
        hostEnv: resolved.hostEnv,
        home: this.home,
        tmp: this.tmp,
      });
      for (const [key, value] of Object.entries(resolved.env)) {
        setVar(this.#base, key, value, this.platform);
      }
      if (resolved.git) initGitRepo(this.workspace, this.env(), join(this.root, 'no-hooks'));
      // After the repo is made: the sandbox's own git is not the program's.
      if (resolved.commands === 'mocked-only') {
        this.#strictPath = makeStrictPath(
          this.root,
          resolved.allow,
          resolved.hostEnv,
          'createSandbox()',
        );
        setVar(
          this.#base,
          pathKey(this.#base, this.platform),
          this.#strictPath.path,
          this.platform,
        );
      }
    } catch (error) {
      if (!this.#keep) this.#temp.remove();
      throw error;
    }
    this.#leak = trackLeak('sandbox', this.root, {
      holds: () => this.leakHolds(),
      dispose: () => this.dispose(),
    });
  }

  /** @internal What the leak sanitizer reports of an undisposed sandbox (LK-02). */
  leakHolds(): string[] {
    if (this.#disposing) return [];
    return holdLines({
      'its processes': () => {
        const running = [...this.#processes].filter((p) => p.running === true);
        if (running.length === 0) return undefined;
        const shown = running.slice(0, 5).map((p) => p.leakLabel?.() ?? 'a process');
        const more = running.length > 5 ? ` … and ${running.length - 5} more` : '';
        return `${counted(running.length, 'process', 'processes')} running: ${shown.join('; ')}${more}`;
      },
      'its PATH': () =>
        this.#pathDirs.length === 0 ? undefined : `PATH dirs used: ${this.#pathDirs.join(', ')}`,
    });
  }

  /**
   * A fresh copy of the sandbox env: the allowlisted host vars, the sandbox
   * dirs and git isolation, the `env` option, then `setEnv`/`removeEnv` in
   * call order; last, the `use()` dirs go first on PATH, most recent first.
   * Inside a leak sanitizer scope (`sanitize.begin()`), also its
   * `SHIMKIT_LEAK_COOKIE`, so what runs with this env can be found (LK-01).
   */
  env(): Record<string, string> {
    this.#assertLive();
    const env = { ...this.#base };
    for (const [key, value] of this.#overrides) setVar(env, key, value, this.platform);
    // A mock added to a used dir after use() is not refused either.
    if (this.#strictPath) for (const dir of this.#pathDirs) this.#strictPath.unrefuseDir(dir);
    let withPath: Env = env;
    for (const dir of [...this.#pathDirs].reverse()) {
      withPath = envWithPathEntry(withPath, dir, this.platform);
    }
    // The leak sanitizer's cookie (LK-01), though the host env is not copied.
    return addLeakCookie(withPath as Record<string, string>);
  }

  /** Set an env var, over everything else (including `HOME` and `PATH`). */
  setEnv(key: string, value: string): this {
    this.#assertLive();
    checkEnvKey(key, 'sandbox.setEnv()');
    if (typeof value !== 'string' || value.includes('\0')) {
      throw new InvalidOptionError(
        `Expected the value of sandbox.setEnv(${JSON.stringify(key)}, …) to be a string without NUL, got ${describeValue(value)}. To unset the var, use sandbox.removeEnv(${JSON.stringify(key)}).`,
      );
    }
    this.#override(key, value);
    return this;
  }

  /** Remove an env var, whatever set it (the host allowlist, the sandbox, or `env`). */
  removeEnv(key: string): this {
    this.#assertLive();
    checkEnvKey(key, 'sandbox.removeEnv()');
    this.#override(key, undefined);
    return this;
  }

  /**
   * Put a dir first on the sandbox PATH: a `MockBinary` or `MockBinDir` (its
   * `dir`), or an absolute dir path. The most recent `use()` comes first;
   * using a dir again moves it to the front.
   */
  use(entry: SandboxPathEntry): this {
    this.#assertLive();
    const dir =
      typeof entry === 'string'
        ? entry
        : typeof entry === 'object' && entry !== null && typeof entry.dir === 'string'
          ? entry.dir
          : undefined;
    const absolute = this.platform === 'win32' ? win32.isAbsolute : posix.isAbsolute;
    if (dir === undefined || !absolute(dir)) {
      throw new InvalidOptionError(
        `Expected sandbox.use() to get a MockBinary, a MockBinDir or an absolute dir path, got ${describeValue(entry)}.`,
      );
    }
    const delimiter = pathDelimiter(this.platform);
    if (dir.includes(delimiter) || dir.includes('\0')) {
      throw new InvalidOptionError(
        `sandbox.use() cannot put ${JSON.stringify(dir)} on PATH: it contains ${JSON.stringify(dir.includes('\0') ? '\0' : delimiter)}, which would split the entry. Use a dir without it.`,
      );
    }
    const same = (d: string) =>
      this.platform === 'win32' ? d.toLowerCase() === dir.toLowerCase() : d === dir;
    const at = this.#pathDirs.findIndex(same);
    if (at !== -1) this.#pathDirs.splice(at, 1);
    this.#pathDirs.unshift(dir);
    // A strict PATH never refuses a mocked name: made unavailable, it is not found.
    if (this.#strictPath) for (const name of mockNames(entry)) this.#strictPath.unrefuse(name);
    return this;
  }

  /**
   * With `commands: 'mocked-only'`: the names of the commands that were
   * refused so far, in call order (empty otherwise).
   */
  refusedCommands(): string[] {
    return this.#strictPath?.refused() ?? [];
  }

  /**
   * The paths and the env with credential-like values redacted (requirement SP-03),
   * for failure messages. `String(sandbox.diagnostics())` gives a readable
   * multi-line report, env vars sorted by name.
   */
  diagnostics(): SandboxDiagnostics {
    const diagnostics: SandboxDiagnostics = {
      root: this.root,
      home: this.home,
      workspace: this.workspace,
      tmp: this.tmp,
      env: redactEnv(this.env()),
    };
    Object.defineProperty(diagnostics, 'toString', {
      value: () => formatSandboxDiagnostics(diagnostics),
      enumerable: false,
    });
    return diagnostics;
  }

  /**
   * @internal Close `process` before the sandbox dir is removed. Returns a
   * function that stops tracking it (call it once the process is closed).
   */
  track(process: SandboxProcess): () => void {
    this.#assertLive();
    this.#processes.add(process);
    return () => {
      this.#processes.delete(process);
    };
  }

  /**
   * Close every process started in the sandbox, then delete the sandbox dir
   * (unless `keep: true`). Idempotent. Rejects with the first close() error,
   * after the dir is gone.
   */
  dispose(): Promise<void> {
    if (this.#disposing === undefined) {
      this.#disposing = this.#dispose();
      untrackLeak(this.#leak, this.#disposing);
    }
    return this.#disposing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }

  async #dispose(): Promise<void> {
    const processes = [...this.#processes];
    this.#processes.clear();
    const results = await Promise.allSettled(processes.map((p) => p.close()));
    if (!this.#keep) this.#temp.remove();
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  #override(key: string, value: string | undefined): void {
    const same = (k: string) =>
      this.platform === 'win32' ? k.toUpperCase() === key.toUpperCase() : k === key;
    for (const k of [...this.#overrides.keys()]) if (same(k)) this.#overrides.delete(k);
    this.#overrides.set(key, value);
  }

  #assertLive(): void {
    if (this.#disposing) throw new DisposedError(`The sandbox ${this.root}`);
  }
}

/**
 * A fresh sandbox. See {@link TestSandbox}.
 *
 * With `commands: 'mocked-only'` (requirement MB-23), a command the program
 * under test looks up through the sandbox PATH runs only if it is a `use()`d
 * mock or in `allow`; any other is refused (exit 127, a message naming it,
 * listed by `refusedCommands()`). Nothing else is refused: a command run by
 * absolute path, or looked up with PATH removed from the env (`env -i uname`,
 * Python's `subprocess.run(['uname'], env={})`, `os.execvp` after
 * `del os.environ['PATH']`, Node's `spawn('uname', [], { env: {} })`) or with
 * sh's `command -p`, is found in the host's default dirs (`/bin:/usr/bin`)
 * and runs the host's command. Assert on the mocks' `calls()` to know they
 * were the ones called, or run the program under test in a container or mount
 * namespace whose `/bin` and `/usr/bin` hold only what it may run.
 *
 * @example
 * await using sb = createSandbox({ commands: 'mocked-only', allow: ['sh'] });
 * const r = await run('sh', ['-c', 'curl -fsS https://example.invalid'], { sandbox: sb });
 * // r.exitCode === 127; sb.refusedCommands() is ['curl']
 */
export function createSandbox(options?: SandboxOptions): TestSandbox {
  return new TestSandbox(options);
}

/**
 * ```text
 * sandbox /tmp/shimkit-sandbox-x1
 *   home       /tmp/shimkit-sandbox-x1/home
 *   workspace  /tmp/shimkit-sandbox-x1/workspace
 *   tmp        /tmp/shimkit-sandbox-x1/tmp
 *   env (2 vars, credential-like values redacted):
 *     GH_TOKEN=[redacted]
 *     HOME=/tmp/shimkit-sandbox-x1/home
 * ```
 */
export function formatSandboxDiagnostics(diagnostics: SandboxDiagnostics): string {
  const vars = Object.keys(diagnostics.env).sort();
  return [
    `sandbox ${diagnostics.root}`,
    `  home       ${diagnostics.home}`,
    `  workspace  ${diagnostics.workspace}`,
    `  tmp        ${diagnostics.tmp}`,
    `  env (${vars.length} vars, credential-like values redacted):`,
    ...vars.map((key) => `    ${key}=${diagnostics.env[key]}`),
  ].join('\n');
}

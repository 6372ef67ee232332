import { tmpdir } from 'node:os';
import { describeValue } from '../internal/describe.js';
import { InvalidOptionError } from '../internal/errors.js';
import { checkOptionKeys, isDir, optionError, resolvePlatform } from '../internal/options.js';
import type { Env } from '../internal/path-env.js';

/** Options of `createSandbox()`. */
export interface SandboxOptions {
  /**
   * Extra env vars, applied over the allowlisted host vars and the sandbox's
   * own dirs (so they may replace `HOME` or `PATH`). `undefined` removes a var.
   * `setEnv()` and `removeEnv()` still win over these.
   * @default {}
   * @example
   * createSandbox({ env: { CI: '1', NO_COLOR: '1', TERM: undefined } });
   */
  env?: Record<string, string | undefined>;
  /**
   * Make the workspace a git repo on branch `main` with one empty commit by
   * `shimkit <shimkit@example.invalid>` dated 2000-01-01, whatever the host's
   * git config, hooks or templates. Needs `git` on the sandbox PATH; throws
   * `GitSetupError` when git is missing or fails.
   * @default false
   * @example
   * await using sb = createSandbox({ git: true });
   * spawnSync('git', ['log', '--oneline'], { cwd: sb.workspace, env: sb.env() });
   */
  git?: boolean;
  /**
   * Leave the sandbox dir on disk after `dispose()` and after the test process
   * exits, to look at it. Deleting it is then up to you.
   * @default false
   * @example
   * const sb = createSandbox({ keep: true });
   * console.log(`sandbox kept at ${sb.root}`);
   */
  keep?: boolean;
  /**
   * Parent dir of the sandbox dir. Must exist: a missing dir throws
   * `InvalidOptionError` at once.
   * @default os.tmpdir()
   * @example
   * createSandbox({ tmpDir: '/var/tmp' });
   */
  tmpDir?: string;
  /**
   * Which platform's env rules apply: the allowlist, case-insensitive keys
   * and `;` PATH on `'win32'`. Meant for testing the Windows rules elsewhere.
   * @default process.platform
   * @example
   * createSandbox({ platform: 'win32', hostEnv: { Path: 'C:\\bin', SYSTEMROOT: 'C:\\Windows' } });
   */
  platform?: NodeJS.Platform;
  /**
   * The host env the allowlisted vars are copied from, read once at creation.
   * @default process.env
   * @example
   * createSandbox({ hostEnv: { PATH: '/usr/bin', AWS_SECRET_ACCESS_KEY: 'never copied' } });
   */
  hostEnv?: Record<string, string | undefined>;
  /**
   * `'mocked-only'`: the sandbox PATH runs only the mocks given to
   * `sandbox.use()` and the commands in `allow` (requirement MB-23). Any
   * other command on the host PATH, looked up through the sandbox PATH,
   * fails with exit code 127 and
   * `shimkit: curl is not mocked and not allowed in this sandbox …` on
   * stderr, and is listed by `sandbox.refusedCommands()`. POSIX only.
   *
   * Only lookups through the sandbox PATH are refused; it is a guard against
   * a forgotten mock, not a jail. A command run by absolute path
   * (`/usr/bin/curl`), or looked up with PATH removed from the env
   * (`env -i uname`, Python's `subprocess.run(['uname'], env={})`,
   * `os.execvp('uname', …)` after `del os.environ['PATH']`, Node's
   * `spawn('uname', [], { env: {} })`) or with sh's `command -p uname`, is
   * found in the host's default dirs (`/bin:/usr/bin`) and runs for real:
   * not refused, not listed by `refusedCommands()`. To know the mock was the
   * one called, assert on its `calls()`; to make the host's commands
   * unreachable, run the program under test in a container or mount
   * namespace whose `/bin` and `/usr/bin` hold only what it may run.
   * @default 'host' (the host PATH, as allowlisted)
   * @example
   * createSandbox({ commands: 'mocked-only', allow: ['sh', 'node'] });
   */
  commands?: 'host' | 'mocked-only';
  /**
   * With `commands: 'mocked-only'`: the real commands the program under test
   * may run, found on the host PATH when the sandbox is made. A script run
   * through `#!/usr/bin/env bash` needs `bash` here.
   * @default []
   */
  allow?: string[];
}

const OPTION_KEYS: ReadonlyArray<keyof SandboxOptions> = [
  'env',
  'git',
  'keep',
  'tmpDir',
  'platform',
  'hostEnv',
  'commands',
  'allow',
];
const WHERE = 'createSandbox()';

export interface ResolvedSandboxOptions {
  env: Record<string, string | undefined>;
  git: boolean;
  keep: boolean;
  tmpDir: string | undefined;
  platform: NodeJS.Platform;
  hostEnv: Env;
  commands: 'host' | 'mocked-only';
  allow: string[];
}

/** Check every option now, before anything is created. */
export function resolveSandboxOptions(options: SandboxOptions): ResolvedSandboxOptions {
  checkOptionKeys(options, OPTION_KEYS, WHERE);
  const bad = (option: string, expected: string, value: unknown) =>
    optionError(WHERE, option, expected, value);
  const { git = false, keep = false, tmpDir } = options;
  if (typeof git !== 'boolean') throw bad('git', 'true or false', git);
  if (typeof keep !== 'boolean') throw bad('keep', 'true or false', keep);
  if (tmpDir !== undefined && (typeof tmpDir !== 'string' || tmpDir === '')) {
    throw bad('tmpDir', 'a directory path', tmpDir);
  }
  if (tmpDir !== undefined && !isDir(tmpDir)) {
    throw new InvalidOptionError(
      `The \`tmpDir\` option of ${WHERE} is not an existing dir: ${tmpDir}. Create it first, or leave \`tmpDir\` out to use os.tmpdir() (${tmpdir()}).`,
    );
  }
  const env = checkEnvObject(options.env === undefined ? {} : options.env, 'env', bad);
  const hostEnv = checkEnvObject(
    options.hostEnv === undefined ? process.env : options.hostEnv,
    'hostEnv',
    bad,
  );
  const platform = resolvePlatform(options.platform, WHERE);
  const { commands = 'host', allow = [] } = options;
  if (commands !== 'host' && commands !== 'mocked-only') {
    throw bad('commands', "'host' or 'mocked-only'", commands);
  }
  if (
    !Array.isArray(allow) ||
    !allow.every((a) => typeof a === 'string' && /^[^/\0]+$/.test(a) && a !== '.' && a !== '..')
  ) {
    throw bad('allow', 'an array of command names (no path separators)', allow);
  }
  if (allow.length > 0 && commands !== 'mocked-only') {
    throw new InvalidOptionError(
      `${WHERE}: \`allow\` only means something with \`commands: 'mocked-only'\`; add that, or leave \`allow\` out.`,
    );
  }
  if (commands === 'mocked-only' && platform === 'win32') {
    throw new InvalidOptionError(
      `${WHERE}: \`commands: 'mocked-only'\` is not supported on Windows yet; give the program under test a PATH of mock dirs instead (sandbox.setEnv('Path', bin.dir)).`,
    );
  }
  return {
    env,
    git,
    keep,
    tmpDir,
    platform,
    hostEnv: { ...hostEnv },
    commands,
    allow: [...allow],
  };
}

function checkEnvObject(
  value: unknown,
  option: string,
  bad: (option: string, expected: string, value: unknown) => InvalidOptionError,
): Record<string, string | undefined> {
  const expected = 'an object of env var names to strings (or undefined)';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw bad(option, expected, value);
  }
  for (const [key, entry] of Object.entries(value)) {
    checkEnvKey(key, `the \`${option}\` option of ${WHERE}`);
    if (entry !== undefined && (typeof entry !== 'string' || entry.includes('\0'))) {
      throw bad(`${option}.${key}`, 'a string without NUL (or undefined)', entry);
    }
  }
  return value as Record<string, string | undefined>;
}

export function checkEnvKey(key: unknown, where: string): void {
  if (typeof key !== 'string' || key === '' || key.includes('=') || key.includes('\0')) {
    throw new InvalidOptionError(
      `Expected an env var name in ${where}: a non-empty string without "=" or NUL, got ${describeValue(key)}.`,
    );
  }
}

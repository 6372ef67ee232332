import { existsSync } from 'node:fs';
import { describeValue, oneOf } from '../internal/describe.js';
import { InvalidOptionError } from '../internal/errors.js';
import { addLeakCookie } from '../internal/leak-cookie.js';
import { DEFAULT_WAIT_MS } from '../internal/limits.js';
import { checkMs, checkOptionKeys, isDir, optionError } from '../internal/options.js';
import type { Env } from '../internal/path-env.js';
import { CommandNotFoundError } from './errors.js';
import { assertIsolated } from './isolation.js';
import { type PtyOptions, type ResolvedPty, resolvePty } from './pty/options.js';
import type { TestSandbox } from './sandbox.js';
import type { OutputSource } from './types.js';
import { commandCandidates, findCommand, notExecutable } from './which.js';

/** Options of `spawnProcess()`. */
export interface SpawnProcessOptions {
  /**
   * Run inside this sandbox: its env (isolated HOME, mocks first on PATH) and,
   * unless `cwd` is given, its workspace as the working dir. Disposing the
   * sandbox closes the process.
   */
  sandbox?: TestSandbox;
  /**
   * Working dir.
   * @default sandbox.workspace, else process.cwd()
   */
  cwd?: string;
  /**
   * Env vars to set on top of the sandbox env (or of `process.env` without a
   * sandbox); `undefined` removes one.
   *
   * With `sandbox`, pass only the vars you mean to set. An env that looks like
   * a copy of the host's — a mock's `env()`, `{ ...process.env, … }` — throws
   * `InvalidOptionError` instead of undoing the isolation (requirement SP-09): it is
   * one when it gives `HOME`, `USERPROFILE`, an `XDG_*` dir, `TMPDIR`/`TMP`/
   * `TEMP`, `APPDATA` or `LOCALAPPDATA` the host's value, or carries the
   * host's values for more than half of the host's vars outside the sandbox
   * allowlist. Put mocks on the sandbox PATH with `sandbox.use(mock)`; to pass
   * a host value on purpose, use `sandbox.setEnv(name, value)`. Inside a
   * leak sanitizer scope the program also gets its `SHIMKIT_LEAK_COOKIE`,
   * whatever this env holds (LK-01).
   * @example
   * sb.use(git);
   * await run('my-cli', ['release'], { sandbox: sb, env: { CI: '1' } });
   */
  env?: Env;
  /**
   * `'pipe'` to write to the process (`write()`, `end()`, `respond()`,
   * `send()`), `'ignore'` for an empty stdin, `'inherit'` for the test's own,
   * or the whole input as a string or bytes (written, then stdin is closed).
   * @default 'pipe'
   */
  stdin?: 'pipe' | 'ignore' | 'inherit' | string | Uint8Array;
  /**
   * How much of stdout and of stderr to keep (the last bytes); the rest is
   * counted in `droppedBytes` and let go, so memory stays flat.
   * @default 65536
   */
  tailBytes?: number;
  /**
   * Default grace for `close()`: how long after SIGTERM before SIGKILL.
   * @default 2000
   */
  graceMs?: number;
  /**
   * After exit, how long to keep reading output that is still in the pipes
   * (a background grandchild may hold them open).
   * @default 2000
   */
  drainMs?: number;
  /**
   * Leave the process running when the test process exits (for debugging).
   * @default false
   */
  keep?: boolean;
  /**
   * Run the program on a pseudo-terminal of this size (`true`: 80×24), so
   * that `isatty()` is true, `/dev/tty` works and the program draws its
   * screen as it would for a user (requirement SP-13). Then `type()`, `press()`,
   * `resize()`, `screen()` and `waitForScreen()` work; the program's stdout
   * and stderr are one stream, read as `stdout`; `TERM` is `xterm-256color`
   * unless `env` sets it; `stdin` must be `'pipe'` (with `run()`, `input`
   * is typed, then Ctrl+D, and the result has the last `screen`). Needs
   * python3 on POSIX (else `PtyUnavailableError`, naming the package to
   * install); cells are counted as tmux counts them (emoji two wide).
   * @example
   * await using p = spawnProcess('less', ['notes.txt'], { sandbox: sb, pty: { cols: 80, rows: 24 } });
   * await p.waitForScreen(/notes\.txt/);
   * p.press('q');
   */
  pty?: PtyOptions | boolean;
}

/** Options of `run()`. */
export interface RunOptions extends Omit<SpawnProcessOptions, 'stdin' | 'keep'> {
  /**
   * Deadline: when it passes, the process tree is closed (SIGTERM, then
   * SIGKILL after `graceMs`) and the result says `timedOut: true`. The
   * default is below the 5 s test timeout of vitest and jest, so a hung
   * command ends with its output in the result rather than with the runner's
   * bare "test timed out"; pass a longer one (and raise the runner's) for
   * slow commands.
   * @default 4000
   */
  timeoutMs?: number;
  /**
   * Written to stdin, which is then closed. Without it stdin is empty. With
   * `pty`, it is typed into the terminal, followed by Ctrl+D (end of input
   * for a program reading lines; a partial last line needs a second one, so
   * end the input with `\n`); without it nothing is typed.
   */
  input?: string | Uint8Array;
}

/** Spawn options after checking, with defaults filled in. */
export interface ResolvedSpawn {
  sandbox: TestSandbox | undefined;
  cwd: string;
  /** Where the command was found (on the child's PATH, or as given). */
  file: string;
  env: Record<string, string>;
  stdin: 'pipe' | 'ignore' | 'inherit';
  input: string | Uint8Array | undefined;
  tailBytes: number;
  graceMs: number;
  drainMs: number;
  keep: boolean;
  platform: NodeJS.Platform;
  /** Set when the program runs on a pseudo-terminal. */
  pty: ResolvedPty | undefined;
}

const SPAWN_KEYS = [
  'sandbox',
  'cwd',
  'env',
  'stdin',
  'tailBytes',
  'graceMs',
  'drainMs',
  'keep',
  'pty',
];
const RUN_KEYS = [
  'sandbox',
  'cwd',
  'env',
  'tailBytes',
  'graceMs',
  'drainMs',
  'timeoutMs',
  'input',
  'pty',
];
const STDIN_MODES = ['pipe', 'ignore', 'inherit'] as const;
const SOURCES: readonly OutputSource[] = ['stdout', 'stderr', 'all'];

/** Check a command line and spawn options; find the command or throw `CommandNotFoundError`. */
export function resolveSpawn(
  command: unknown,
  args: unknown,
  options: SpawnProcessOptions | undefined,
  fn: 'spawnProcess' | 'run',
  platform: NodeJS.Platform = process.platform,
  hostEnv: Env = process.env,
  exists: (file: string) => boolean = existsSync,
): ResolvedSpawn {
  if (typeof command !== 'string' || command === '' || command.includes('\0')) {
    throw new InvalidOptionError(
      `Expected the command of ${fn}() to be a non-empty string without NUL, got ${describeValue(command)}.`,
    );
  }
  const where = `${fn}(${JSON.stringify(command)})`;
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) {
    throw new InvalidOptionError(
      `Expected the arguments of ${where} to be an array of strings, got ${describeValue(args)}.`,
    );
  }
  const o = checkOptionKeys(options, fn === 'run' ? RUN_KEYS : SPAWN_KEYS, where);
  const sandbox = o.sandbox;
  if (
    sandbox !== undefined &&
    (typeof sandbox !== 'object' || typeof sandbox?.env !== 'function')
  ) {
    throw optionError(where, 'sandbox', 'a sandbox from createSandbox()', sandbox);
  }
  const cwd = o.cwd ?? sandbox?.workspace ?? process.cwd();
  if (typeof cwd !== 'string' || cwd === '') throw optionError(where, 'cwd', 'a dir path', cwd);
  if (!isDir(cwd)) {
    throw new InvalidOptionError(
      `The \`cwd\` of ${where} is not an existing dir: ${cwd}. Create it first, or leave \`cwd\` out to use ${sandbox ? 'the sandbox workspace' : 'process.cwd()'}.`,
    );
  }
  if (
    o.env !== undefined &&
    (typeof o.env !== 'object' || o.env === null || Array.isArray(o.env))
  ) {
    throw optionError(where, 'env', 'an object of env vars', o.env);
  }
  const base = sandbox ? sandbox.env() : stringEnv(process.env);
  // The leak sanitizer's cookie (LK-01) reaches it whatever env it is given.
  const env = addLeakCookie(mergeEnv(base, o.env, platform, where));
  const pty =
    o.pty === undefined || o.pty === false
      ? undefined
      : resolvePty(o.pty, where, { platform, hostEnv, exists });
  // The terminal is an xterm, whatever the host's TERM was (a CI's is often `dumb` or unset).
  if (pty && !(o.env && 'TERM' in o.env)) env.TERM = 'xterm-256color';
  if (sandbox && o.env) assertIsolated(o.env, base, hostEnv, platform, where);

  let stdin: ResolvedSpawn['stdin'] = 'pipe';
  let input: string | Uint8Array | undefined;
  const given = fn === 'run' ? (o as RunOptions).input : o.stdin;
  if (fn === 'run') {
    // On a terminal, run()'s input is typed (then Ctrl+D); without it nothing is.
    if (given === undefined) stdin = pty ? 'pipe' : 'ignore';
    else if (typeof given === 'string' || given instanceof Uint8Array) input = given;
    else throw optionError(where, 'input', 'a string or bytes', given);
  } else if (given !== undefined) {
    if (typeof given === 'string' && (STDIN_MODES as readonly string[]).includes(given)) {
      stdin = given as ResolvedSpawn['stdin'];
    } else if (typeof given === 'string' || given instanceof Uint8Array) {
      input = given;
    } else {
      throw optionError(
        where,
        'stdin',
        `${oneOf(STDIN_MODES)}, or the input as a string or bytes`,
        given,
      );
    }
  }
  if (pty) checkPtyLaunch(args as string[], env, where);
  if (pty && fn === 'spawnProcess' && (stdin !== 'pipe' || input !== undefined)) {
    throw new InvalidOptionError(
      `${where}: \`stdin\` must be 'pipe' (the default) with \`pty\`: the terminal is the program's stdin. Type into it with type() and press() once it runs.`,
    );
  }
  const tailBytes = o.tailBytes ?? 64 * 1024;
  if (!Number.isInteger(tailBytes) || tailBytes < 0 || tailBytes > 2 ** 30) {
    throw optionError(where, 'tailBytes', 'an integer number of bytes from 0 to 1 GiB', tailBytes);
  }
  if (o.keep !== undefined && typeof o.keep !== 'boolean') {
    throw optionError(where, 'keep', 'true or false', o.keep);
  }

  const file = findCommand(command, env, cwd, platform);
  if (file === undefined) {
    const { dirs } = commandCandidates(command, env, cwd, platform);
    throw new CommandNotFoundError(command, dirs, cwd, notExecutable(command, env, cwd, platform));
  }
  return {
    file,
    sandbox,
    cwd,
    env,
    stdin,
    input,
    tailBytes,
    graceMs: checkMs(where, 'graceMs', o.graceMs, 2000),
    drainMs: checkMs(where, 'drainMs', o.drainMs, 2000),
    keep: o.keep ?? false,
    platform,
    pty,
  };
}

/**
 * What the PTY helper cannot pass to execve, refused here as Node's own spawn
 * refuses it on pipes: a NUL in an argument or the env, an empty env name or
 * one with `=` (python's execve refuses those).
 */
function checkPtyLaunch(args: string[], env: Record<string, string>, where: string): void {
  for (const [i, arg] of args.entries()) {
    if (arg.includes('\0')) {
      throw new InvalidOptionError(
        `Argument ${i + 1} of ${where} holds a NUL byte, which no program can be given: ${describeValue(arg)}.`,
      );
    }
  }
  for (const [key, value] of Object.entries(env)) {
    if (key === '' || key.includes('=') || key.includes('\0') || value.includes('\0')) {
      throw new InvalidOptionError(
        `The env var ${JSON.stringify(key)} of ${where} cannot be passed to a program on a PTY: a name must be non-empty without "=" or NUL, and a value without NUL.`,
      );
    }
  }
}

export function resolveRunTimeout(options: RunOptions | undefined, command: string): number {
  return checkMs(
    `run(${JSON.stringify(command)})`,
    'timeoutMs',
    options?.timeoutMs,
    DEFAULT_WAIT_MS,
    1,
  );
}

export function resolveWaitOptions(
  options: { timeoutMs?: number } | undefined,
  where: string,
): { timeoutMs: number | undefined } {
  const o = checkOptionKeys(options, ['timeoutMs'], where);
  if (o.timeoutMs === undefined) return { timeoutMs: undefined };
  return { timeoutMs: checkMs(where, 'timeoutMs', o.timeoutMs, 0) };
}

export function resolveCloseOptions(
  options: { graceMs?: number } | undefined,
  spawn: ResolvedSpawn,
  where: string,
): { graceMs: number } {
  const o = checkOptionKeys(options, ['graceMs'], where);
  return { graceMs: checkMs(where, 'graceMs', o.graceMs, spawn.graceMs) };
}

/** A function that finds `pattern` in a text, as a RegExp match (strings match literally). */
export type Matcher = (text: string) => RegExpExecArray | null;

/** Turn a string or RegExp into a matcher; `g` and `y` flags are dropped (matching is stateless). */
export function toMatcher(pattern: unknown, where: string): Matcher {
  let regex: RegExp;
  if (typeof pattern === 'string' && pattern !== '') {
    regex = new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  } else if (pattern instanceof RegExp) {
    regex = new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ''));
  } else {
    throw new InvalidOptionError(
      `Expected the pattern of ${where} to be a non-empty string or a RegExp, got ${describeValue(pattern)}.`,
    );
  }
  if (regex.exec('')?.[0] === '') {
    throw new InvalidOptionError(
      `The pattern ${String(pattern)} of ${where} matches empty text, so it would match at once; make it require at least one character.`,
    );
  }
  return (text) => regex.exec(text);
}

export function checkSource(value: unknown, where: string): OutputSource {
  if (value === undefined) return 'all';
  if (!SOURCES.includes(value as OutputSource))
    throw optionError(where, 'stream', oneOf(SOURCES), value);
  return value as OutputSource;
}

export function resolveWaitForOutputOptions(
  pattern: unknown,
  options: { timeoutMs?: number; stream?: OutputSource } | undefined,
  where: string,
): { timeoutMs: number; stream: OutputSource; matcher: Matcher } {
  const matcher = toMatcher(pattern, where);
  const o = checkOptionKeys(options, ['timeoutMs', 'stream'], where);
  return {
    matcher,
    timeoutMs: checkMs(where, 'timeoutMs', o.timeoutMs, DEFAULT_WAIT_MS, 1),
    stream: checkSource(o.stream, where),
  };
}

/**
 * `base` with `overrides` applied (`undefined` removes a var). On Windows env
 * keys are case-insensitive: `PATH` replaces a `Path`, never sits beside it.
 */
export function mergeEnv(
  base: Record<string, string>,
  overrides: Env | undefined,
  platform: NodeJS.Platform,
  where: string,
): Record<string, string> {
  const env = { ...base };
  for (const [key, value] of Object.entries(overrides ?? {})) {
    if (value !== undefined && typeof value !== 'string') {
      throw optionError(where, `env.${key}`, 'a string or undefined', value);
    }
    if (platform === 'win32') {
      for (const k of Object.keys(env)) if (k.toUpperCase() === key.toUpperCase()) delete env[k];
    }
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

function stringEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) out[key] = value;
  return out;
}

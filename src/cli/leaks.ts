import { spawn } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { constants } from 'node:os';
import { resolve } from 'node:path';
// The leak scan is not in the public door (only `sanitize` is): this command
// is bundled on its own with the part of the core it uses, as serve is.
import { LEAK_COOKIE_VAR } from '../internal/leak-cookie.js';
import { formatLeakedProcess } from '../leaks/format.js';
import { type ProcReader, pidMark } from '../leaks/scan.js';
import { type CookieSweep, newCookie, sweepCookie } from '../leaks/sweep.js';
import { type FlagSpecs, milliseconds, parseArgs } from './args.js';
import type { Command } from './command.js';
import { ExitCode, UsageError } from './exit-codes.js';
import { commandModule } from './run.js';
import { shQuote } from './words.js';

/**
 * `shimkit leaks -- CMD …` (LK-07): run any test command (pytest, bats,
 * go test) with a fresh leak cookie in its env, and once it has exited,
 * report, kill and reap every process that carries the cookie and outlived it.
 */

/** The env var that names the JSON report file when `--json` is not given. */
export const LEAKS_JSON_VAR = 'SHIMKIT_LEAKS_JSON';

const FLAGS: FlagSpecs = {
  json: { kind: 'value', value: 'PATH' },
  'wait-ms': { kind: 'value', value: 'MS' },
  warn: { kind: 'switch' },
};

const USAGE = 'shimkit leaks [--warn] [--wait-ms MS] [--json PATH] -- COMMAND [ARGS...]';

/** The signals passed on to the command while it runs. */
const FORWARDED = ['SIGINT', 'SIGTERM'] as const;

/** One line of the JSON report (`--json PATH` or SHIMKIT_LEAKS_JSON=PATH), appended. */
export interface CommandLeakRecord extends CookieSweep {
  type: 'command';
  /** The command's argv. */
  command: string[];
  cookie: string;
  /** The command's exit code; null when a signal ended it. */
  exitCode: number | null;
  /** The signal that ended the command, if one did. */
  signal: string | null;
  /** What `shimkit leaks` exits with. */
  exit: number;
  /** Time spent scanning, killing and reaping, in ms. */
  ms: number;
}

export interface LeaksOptions {
  /** How long to wait for killed processes to be gone. */
  waitMs: number;
  /** Report, but exit with the command's own code. */
  warn: boolean;
  /** An fd open for appending the JSON line to. */
  jsonFd?: number | undefined;
  /** Where /proc is read (tests pass one with no /proc). */
  reader?: ProcReader | undefined;
  /** Where the report goes. */
  write?: (text: string) => void;
  env?: NodeJS.ProcessEnv;
}

/**
 * Run `argv` with stdio inherited and a fresh cookie, wait for it, then
 * sweep what carries the cookie; resolves with the exit code of
 * `shimkit leaks`.
 */
export async function runWithLeakCheck(
  argv: readonly string[],
  options: LeaksOptions,
): Promise<number> {
  const write = options.write ?? ((text: string) => process.stderr.write(text));
  const [file, ...args] = argv as [string, ...string[]];
  const commandText = argv.map(oneLine).join(' ');
  const cookie = newCookie('cli-');
  // Taken before the command starts: every process it makes has a later pid.
  const since = pidMark(options.reader);
  // A cookie already in the env (shimkit leaks inside a sanitized test, or
  // nested) is replaced: this command's processes are judged by their own.
  const env = { ...(options.env ?? process.env), [LEAK_COOKIE_VAR]: cookie };
  const ended = await new Promise<
    { code: number | null; signal: NodeJS.Signals | null } | { error: NodeJS.ErrnoException }
  >((done) => {
    const child = spawn(file, args, { stdio: 'inherit', env });
    // Passed on as npm run does: a kill of shimkit alone reaches the command.
    // (A Ctrl-C at a terminal reaches both, so the command may see it twice.)
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    for (const signal of FORWARDED) process.on(signal, forward);
    const settle = (result: Parameters<typeof done>[0]) => {
      for (const signal of FORWARDED) process.off(signal, forward);
      done(result);
    };
    child.once('error', (error) => settle({ error }));
    child.once('exit', (code, signal) => settle({ code, signal }));
  });
  if ('error' in ended) {
    const { code } = ended.error;
    write(
      `shimkit leaks: cannot run ${shQuote(file)}: ${code === 'ENOENT' ? 'no such command (is it on PATH?)' : ended.error.message}\n`,
    );
    return code === 'ENOENT' ? 127 : 126; // as a shell says it
  }
  const own = ended.code ?? 128 + (ended.signal ? (constants.signals[ended.signal] ?? 0) : 0);

  const began = performance.now();
  const sweep = await sweepCookie(cookie, {
    since,
    waitMs: options.waitMs,
    reader: options.reader,
  });
  const ms = performance.now() - began;
  const leaked = sweep.processes.length > 0;
  const exit = leaked && own === 0 && !options.warn ? ExitCode.failed : own;

  if (!sweep.scanned) {
    write(
      `shimkit leaks: not scanned for leaked processes: there is no /proc here (the scan is Linux-only so far); the command ran, and its exit code is kept.\n`,
    );
  } else if (leaked) {
    const lines = sweep.processes.map(
      (p) => `  ${formatLeakedProcess(p, process.pid, 'shimkit leaks')}`,
    );
    const left =
      sweep.remaining.length > 0
        ? `\n  still running ${options.waitMs} ms after SIGKILL: ${sweep.remaining.map((pid) => `pid ${pid}`).join(', ')}`
        : '';
    const n = sweep.processes.length;
    write(
      `shimkit leaks: ${n} process${n === 1 ? '' : 'es'} outlived ${commandText} (killed):\n${lines.join('\n')}${left}\n`,
    );
    if (exit !== own) {
      write(
        `shimkit leaks: exit ${exit}, though the command exited ${own} (--warn keeps its exit code).\n`,
      );
    }
  }
  if (options.jsonFd !== undefined) {
    const record: CommandLeakRecord = {
      type: 'command',
      command: [...argv],
      cookie,
      exitCode: ended.code,
      signal: ended.signal,
      ...sweep,
      exit,
      ms,
    };
    writeSync(options.jsonFd, `${JSON.stringify(record)}\n`);
  }
  return exit;
}

/** An argument for the report's one line: quoted for sh, or as JSON when it holds a newline or another control character. */
function oneLine(arg: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
  return /[\u0000-\u001f\u007f]/.test(arg) ? JSON.stringify(arg) : shQuote(arg);
}

/** The flags before the command, and the command: after `--`, or from the first argument that is not a flag. */
function splitCommand(argv: readonly string[]): { flags: string[]; command: string[] } {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') return { flags: argv.slice(0, i), command: argv.slice(i + 1) };
    if (!arg.startsWith('-') || arg === '-') {
      return { flags: argv.slice(0, i), command: argv.slice(i) };
    }
    const name = arg.slice(2).split('=')[0] as string;
    if (FLAGS[name]?.kind === 'value' && !arg.includes('=')) i++; // its value
  }
  return { flags: [...argv], command: [] };
}

/** The fd to append the JSON report to, opened now so a bad path fails before the command runs. */
function openJson(path: string, from: string): number {
  try {
    return openSync(resolve(path), 'a');
  } catch (error) {
    throw new UsageError(
      'leaks',
      `${from} ${JSON.stringify(path)}: cannot open it to append the report (${(error as Error).message}).`,
    );
  }
}

export const leaksCommand: Command = {
  name: 'leaks',
  usage: USAGE,
  help: `Run a test command (pytest, bats, go test, anything) and report the processes it
left running. The command runs with stdio inherited and a fresh cookie in its env,
SHIMKIT_LEAK_COOKIE=cli-<pid>-<start>-<random>-<n> (replacing one already set);
everything it starts inherits it, also what leaves its process group (setsid, a
double fork).
Once the command has exited, every live process that carries the cookie is printed
on stderr, one line each with its pid, argv, parent chain and cwd, then killed
(SIGKILL) and waited for. Nothing is printed when nothing leaked.
SIGINT and SIGTERM are passed on to the command; what it leaves is swept all the same.

The scan reads /proc: Linux only so far. Elsewhere (macOS, Windows) the command
runs, a line says it was not scanned, and its exit code is kept.

Exit code: the command's own, unless something leaked and the command exited 0:
then 1 (with --warn, the command's own code in every case). A command ended by a
signal gives 128+N, one that cannot be started 127 (not found) or 126, as a shell.

Options:
  --warn          report and kill the leaked processes, but exit with the command's code
  --wait-ms MS    how long to wait for killed processes to be gone (default 500; up to 60000)
  --json PATH     append the report to PATH as one JSON line:
                  {"type":"command","command","cookie","exitCode","signal","scanned",
                   "processes","killed","remaining","exit","ms"}
                  (SHIMKIT_LEAKS_JSON=PATH in the env does the same)

Examples:
  shimkit leaks -- python3 -m pytest tests/
  shimkit leaks --warn --json leaks.jsonl -- bats test/
  shimkit leaks -- go test ./...`,
  async run(argv) {
    const { flags, command } = splitCommand(argv);
    const args = parseArgs('leaks', flags, FLAGS);
    if (command.length === 0) {
      throw new UsageError(
        'leaks',
        'missing the command to run: shimkit leaks [OPTIONS] -- COMMAND [ARGS...].',
      );
    }
    const waitText = args.values.get('wait-ms');
    const waitMs = waitText === undefined ? 500 : milliseconds('leaks', '--wait-ms', waitText);
    if (waitMs > 60_000) {
      throw new UsageError(
        'leaks',
        `--wait-ms takes at most 60000 (a minute), got ${JSON.stringify(waitText)}.`,
      );
    }
    const jsonPath = args.values.get('json');
    const fromEnv = process.env[LEAKS_JSON_VAR];
    const jsonFd =
      jsonPath !== undefined
        ? openJson(jsonPath, '--json')
        : fromEnv
          ? openJson(fromEnv, LEAKS_JSON_VAR)
          : undefined;
    try {
      return await runWithLeakCheck(command, { waitMs, warn: args.switches.has('warn'), jsonFd });
    } finally {
      if (jsonFd !== undefined) closeSync(jsonFd);
    }
  },
};

export const { exec, help } = commandModule(leaksCommand);

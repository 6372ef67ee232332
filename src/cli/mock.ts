import { readdirSync } from 'node:fs';
import { delimiter, resolve } from 'node:path';
import {
  createMockBinDir,
  type MockBinaryOptions,
  type MockBinDir,
  openMockBinDir,
  ShimkitError,
} from 'shimkit';
import { milliseconds, parseArgs, positionals } from './args.js';
import type { Command } from './command.js';
import { ExitCode, UsageError } from './exit-codes.js';
import { commandModule } from './run.js';
import { shQuote } from './words.js';

/** `shimkit mock NAME… --dir D`: make mocks in a dir that outlives the command. */
export const mockCommand: Command = {
  name: 'mock',
  usage: 'shimkit mock NAME... --dir D [--json] [--on-exhausted repeat|fail] [--strict] ...',
  help: `Make a mock of each NAME in dir D (created if missing; a dir made by an earlier
\`shimkit mock\` gets the new mocks added). D must be yours: a dir another user owns, or
a symbolic link, is refused (pass the real dir). The mocks outlive this command: queue
responses with \`shimkit enqueue D NAME\`, read calls with \`shimkit calls D\`, check with
\`shimkit verify D\`, and delete D with \`rm -rf D\` when done.

Prints a line for the shell to eval, which puts D/bin first on PATH:
  export PATH='D/bin':"$PATH"

Options:
  --dir D               the mock dir (required)
  --json                print {"dir","binDir","names","shims","path"} instead, "path" being the
                        PATH value to use (D/bin, then this process's PATH)
  --on-exhausted MODE   when the queue is used up: "repeat" the last response (default) or "fail"
  --strict              unexpected calls fail (no repeats); implies --on-exhausted fail
  --timeout MS          a call ends with a diagnostic after this long (default 30000)
  --record-env NAME     record this env var of each call (repeatable; "*" for all, secrets redacted)
  --stdin MODE          "capture" to record each call's stdin, or "ignore" (default)
  --spy                 run the real command (next on PATH) for calls no response is left for

Examples:
  path=$(shimkit mock git --dir "$BATS_TEST_TMPDIR/mocks") || exit; eval "$path"
      (the exit status first: eval "$(shimkit mock …)" alone would go on with the real git)
  shimkit mock git docker --dir /tmp/mocks --strict
  shimkit mock git --dir /tmp/mocks --json`,
  run(argv) {
    const args = parseArgs('mock', argv, {
      dir: { kind: 'value', value: 'D' },
      json: { kind: 'switch' },
      'on-exhausted': { kind: 'value', value: 'repeat|fail' },
      strict: { kind: 'switch' },
      timeout: { kind: 'value', value: 'MS' },
      'record-env': { kind: 'list', value: 'NAME' },
      stdin: { kind: 'value', value: 'capture|ignore' },
      spy: { kind: 'switch' },
    });
    const names = positionals('mock', args, ['NAME'], [], true);
    const dir = args.values.get('dir');
    if (dir === undefined) {
      throw new UsageError(
        'mock',
        `which dir? Pass --dir D, e.g. shimkit mock ${names[0]} --dir "$BATS_TEST_TMPDIR/mocks" (it is made if missing).`,
      );
    }
    const options = mockOptions(args.values, args.lists, args.switches);
    const bin = openOrCreate(dir);
    const made = names.map((name) => bin.mock(name, options));
    if (args.switches.has('json')) {
      const path = [bin.dir, process.env.PATH].filter(Boolean).join(delimiter);
      const out = { dir: bin.root, binDir: bin.dir, names, shims: made.map((m) => m.path), path };
      process.stdout.write(`${JSON.stringify(out)}\n`);
    } else {
      process.stdout.write(`export PATH=${shQuote(bin.dir)}:"$PATH"\n`);
    }
    return ExitCode.ok;
  },
};

/** The mock dir at `dir`: made there if it is missing or empty (kept after this process), else reopened. */
export function openOrCreate(dir: string): MockBinDir {
  const root = resolve(dir);
  if (missingOrEmpty(root)) {
    try {
      return createMockBinDir({ dir: root, keep: true });
    } catch (error) {
      // Another `shimkit mock` made it meanwhile: use that one; anything else speaks for itself.
      if (missingOrEmpty(root) || !(error instanceof ShimkitError)) throw error;
    }
  }
  // Another `shimkit mock` may be making it right now: its marker comes last, within milliseconds.
  const deadline = Date.now() + 2000;
  for (;;) {
    try {
      return openMockBinDir(root);
    } catch (error) {
      const making =
        error instanceof ShimkitError &&
        error.code === 'ERR_SHIMKIT_NOT_MOCK_DIR' &&
        Date.now() < deadline &&
        readdirSync(root).includes('bin');
      if (!making) {
        if (error instanceof ShimkitError && error.code === 'ERR_SHIMKIT_NOT_MOCK_DIR') {
          throw new ShimkitError(
            error.code,
            `${root} exists, is not empty and is not a shimkit mock dir: \`shimkit mock\` makes one in a dir that does not exist yet or is empty. Pass a new path (e.g. "$(mktemp -d)/mocks").`,
          );
        }
        throw error;
      }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10); // a CLI process: a blocking pause is fine
    }
  }
}

function missingOrEmpty(dir: string): boolean {
  try {
    return readdirSync(dir).length === 0;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

function mockOptions(
  values: Map<string, string>,
  lists: Map<string, string[]>,
  switches: Set<string>,
): Omit<MockBinaryOptions, 'tmpDir' | 'platform'> {
  const options: Omit<MockBinaryOptions, 'tmpDir' | 'platform'> = {};
  const exhausted = values.get('on-exhausted');
  if (exhausted !== undefined) {
    if (exhausted !== 'repeat' && exhausted !== 'fail') {
      throw new UsageError(
        'mock',
        `--on-exhausted takes "repeat" or "fail", got ${JSON.stringify(exhausted)}.`,
      );
    }
    options.onExhausted = exhausted;
  }
  if (switches.has('strict')) options.strict = true;
  if (switches.has('spy')) options.spy = true;
  const timeout = values.get('timeout');
  if (timeout !== undefined) options.timeoutMs = milliseconds('mock', '--timeout', timeout);
  const env = lists.get('record-env');
  if (env) options.recordEnv = env.includes('*') ? true : env;
  const stdin = values.get('stdin');
  if (stdin !== undefined) {
    if (stdin !== 'capture' && stdin !== 'ignore') {
      throw new UsageError(
        'mock',
        `--stdin takes "capture" or "ignore", got ${JSON.stringify(stdin)}.`,
      );
    }
    options.stdin = stdin;
  }
  return options;
}

export const { exec, help } = commandModule(mockCommand);

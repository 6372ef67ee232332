import { createRequire } from 'node:module';
import { InvalidOptionError, InvalidResponseError, ShimkitError } from 'shimkit';
import { HelpRequested } from './args.js';
import { callsCommand, verifyCommand } from './calls.js';
import { cleanCommand } from './clean.js';
import type { Command } from './command.js';
import { demoCommand } from './demo.js';
import { enqueueCommand } from './enqueue.js';
import { EXIT_CODES_HELP, ExitCode, UsageError } from './exit-codes.js';
import { mockCommand } from './mock.js';
import { proxyCommand } from './proxy.js';
import { nearestWord } from './words.js';

/**
 * The `shimkit` command: mock binaries and the frame proxy from any
 * language's tests (bash/bats, pytest, Go), through the public door only.
 */

const COMMANDS: readonly Command[] = [
  mockCommand,
  enqueueCommand,
  callsCommand,
  verifyCommand,
  proxyCommand,
  cleanCommand,
  demoCommand,
];

function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return `shimkit: test programs that spawn other programs, from any language.

Usage: shimkit COMMAND [ARGS...]     shimkit COMMAND --help for its options and examples

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

A typical test (bash):
  D=$(mktemp -d)/mocks
  path=$(shimkit mock git --dir "$D") || exit; eval "$path"
  shimkit enqueue "$D" git --stdout 'main' --exit 0
  ./release.sh                      # the script under test runs the mocked git
  shimkit calls "$D" git            # #1 git rev-parse --abbrev-ref HEAD -> exit 0 (response #1)
  shimkit verify "$D"               # exit 1, with a report, if a response was never used
  rm -rf "$D"

${EXIT_CODES_HELP}`;
}

function version(): string {
  try {
    return (createRequire(import.meta.url)('../package.json') as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? COMMANDS.find((c) => c.name === rest[0]) : undefined;
    process.stdout.write(`${topic ? helpOf(topic) : overview()}\n`);
    return name === undefined ? ExitCode.usage : ExitCode.ok;
  }
  if (name === '--version' || name === '-v') {
    process.stdout.write(`${version()}\n`);
    return ExitCode.ok;
  }
  const command = COMMANDS.find((c) => c.name === name);
  try {
    if (!command) {
      const guess = nearestWord(
        name.replace(/^-+/, ''),
        COMMANDS.map((c) => c.name),
      );
      throw new UsageError(
        '',
        `unknown command ${JSON.stringify(name)}.${guess ? ` Did you mean \`shimkit ${guess}\`?` : ''} Commands: ${COMMANDS.map((c) => c.name).join(', ')}.`,
      );
    }
    return await command.run(rest);
  } catch (error) {
    if (error instanceof HelpRequested && command) {
      process.stdout.write(`${helpOf(command)}\n`);
      return ExitCode.ok;
    }
    return report(error, command);
  }
}

function helpOf(command: Command): string {
  return `Usage: ${command.usage}\n\n${command.help}\n\n${EXIT_CODES_HELP}`;
}

function report(error: unknown, command: Command | undefined): number {
  const prefix = command ? `shimkit ${command.name}` : 'shimkit';
  if (error instanceof UsageError) {
    process.stderr.write(
      `${prefix}: ${error.message}\n${command ? `Usage: ${command.usage}\nRun \`shimkit ${command.name} --help\` for the options and examples.` : 'Run `shimkit --help` for the commands.'}\n`,
    );
    return ExitCode.usage;
  }
  if (error instanceof InvalidOptionError || error instanceof InvalidResponseError) {
    process.stderr.write(
      `${prefix}: ${error.message}\nRun \`shimkit ${command?.name ?? ''} --help\` for the options.\n`.replace(
        'shimkit  --help',
        'shimkit --help',
      ),
    );
    return ExitCode.usage;
  }
  if (error instanceof ShimkitError) {
    process.stderr.write(`${prefix}: ${inCliWords(error.message)}\n`);
    return ExitCode.state;
  }
  process.stderr.write(
    `${prefix}: unexpected error (a bug in shimkit; please report it with this output):\n${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  return ExitCode.internal;
}

/**
 * The library's advice in the CLI's words: its `tmpDir` option is where
 * `--dir` points here (test/cli/edges.test.ts holds this to the messages).
 */
function inCliWords(message: string): string {
  return message
    .replace('put mocks elsewhere with the tmpDir option', 'give --dir a dir on another disk')
    .replace('use a shorter tmpDir or mock name', 'use a shorter --dir or mock name');
}

import { InvalidOptionError, InvalidResponseError, ShimkitError } from 'shimkit';
import { HelpRequested } from './args.js';
import type { Command } from './command.js';
import { EXIT_CODES_HELP, ExitCode, UsageError } from './exit-codes.js';

/**
 * What a command's module (dist/cli/NAME.js, bundled on its own with the part
 * of the core it uses) gives the dispatcher: run one of its commands, or its
 * help. Errors are reported here, inside the module, where they are
 * instances of the module's own copy of the core's classes.
 */
export interface CommandModule {
  exec(name: string, argv: readonly string[]): Promise<number>;
  help(name: string): string;
}

export function commandModule(...commands: Command[]): CommandModule {
  const find = (name: string): Command => {
    const command = commands.find((c) => c.name === name);
    if (!command) throw new Error(`no command ${name} in this module`);
    return command;
  };
  return {
    async exec(name, argv) {
      const command = find(name);
      try {
        return await command.run(argv);
      } catch (error) {
        if (error instanceof HelpRequested) {
          process.stdout.write(`${helpOf(command)}\n`);
          return ExitCode.ok;
        }
        return report(error, command);
      }
    },
    help: (name) => helpOf(find(name)),
  };
}

export function helpOf(command: Command): string {
  return `Usage: ${command.usage}\n\n${command.help}\n\n${EXIT_CODES_HELP}`;
}

export function report(error: unknown, command: Command | undefined): number {
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

import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { CommandEntry } from './command.js';
import { EXIT_CODES_HELP, ExitCode, UsageError } from './exit-codes.js';
import { type CommandModule, report } from './run.js';
import { nearestWord } from './words.js';

/**
 * The `shimkit` command: mock binaries, the mock server and the frame proxy from any
 * language's tests (bash/bats, pytest, Go), through the public door only.
 * This dispatcher holds none of the core: each command's module is loaded
 * when it runs (see `CommandEntry`).
 */

const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'mock',
    summary: 'make mock commands in a dir and print the PATH to use them',
    module: 'mock',
  },
  {
    name: 'enqueue',
    summary: 'queue a scripted response for a mock (or a mock server)',
    module: 'enqueue',
  },
  {
    name: 'calls',
    summary: 'print the calls the mocks recorded',
    module: 'calls',
  },
  {
    name: 'verify',
    summary: 'fail (exit 1) if a scripted response was never used (mocks or a mock server)',
    module: 'calls',
  },
  {
    name: 'serve',
    summary: 'run a mock HTTP/SSE server (OpenAI, Anthropic) and print the env to reach it',
    module: 'serve',
  },
  {
    name: 'expect',
    summary: 'tell a mock server how to answer requests that fit',
    module: 'server',
  },
  {
    name: 'requests',
    summary: 'print the requests a mock server received',
    module: 'server',
  },
  {
    name: 'playbook',
    summary: 'add a playbook (the model of an agent under test) to a mock server',
    module: 'server',
  },
  {
    name: 'tool-calls',
    summary: "print the tool calls a mock server's playbooks answered with",
    module: 'server',
  },
  {
    name: 'tool-results',
    summary: 'print the tool results the agent under test sent back',
    module: 'server',
  },
  {
    name: 'stop',
    summary: 'stop a mock server and wait until it is gone',
    module: 'server',
  },
  {
    name: 'reset',
    summary: "forget a mock server's script and log, as a new one",
    module: 'server',
  },
  {
    name: 'wait-requests',
    summary: 'wait until a mock server received N requests',
    module: 'server',
  },
  {
    name: 'hold',
    summary: 'pause the response to the next request that fits (a mock server)',
    module: 'server',
  },
  {
    name: 'release',
    summary: 'let a held response go on, or serve another',
    module: 'server',
  },
  {
    name: 'proxy',
    summary: 'run a frame proxy with faults in the foreground',
    module: 'proxy',
  },
  {
    name: 'verify-pack',
    summary: 'pack a package, install it in a sandbox, run its bins and load every entry point',
    module: 'verify-pack',
  },
  {
    name: 'leaks',
    summary: 'run a test command and report, then kill, the processes it left running',
    module: 'leaks',
  },
  {
    name: 'clean',
    summary: 'remove what test processes that died without cleanup left behind',
    module: 'clean',
  },
  {
    name: 'demo',
    summary: 'run an end-to-end example (mocked git and deploy, then a faulty proxy)',
    module: 'demo',
  },
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

A mock OpenAI/Anthropic API for a test (bash):
  A=$(mktemp -d)/api
  env=$(shimkit serve --dir "$A" --detach) || exit; eval "$env"   # OPENAI_BASE_URL=…
  shimkit expect "$A" --path /v1/chat/completions --sse-chat 'Hello'
  ./agent.sh                        # the program under test streams the scripted answer
  shimkit requests "$A"             # #1 POST /v1/chat/completions → 200 sse 4 events complete (expect#1)
  shimkit verify "$A"; shimkit stop "$A"

${EXIT_CODES_HELP}`;
}

function version(): string {
  try {
    return (createRequire(import.meta.url)('../package.json') as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** The module of a command, built beside this file as dist/cli/NAME.js (tsup.config.ts). */
async function load(entry: CommandEntry): Promise<CommandModule> {
  return import(new URL(`./cli/${entry.module}.js`, import.meta.url).href);
}

export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? COMMANDS.find((c) => c.name === rest[0]) : undefined;
    process.stdout.write(`${topic ? (await load(topic)).help(topic.name) : overview()}\n`);
    return name === undefined ? ExitCode.usage : ExitCode.ok;
  }
  if (name === '--version' || name === '-v') {
    process.stdout.write(`${version()}\n`);
    return ExitCode.ok;
  }
  const entry = COMMANDS.find((c) => c.name === name);
  if (!entry) {
    const guess = nearestWord(
      name.replace(/^-+/, ''),
      COMMANDS.map((c) => c.name),
    );
    return report(
      new UsageError(
        '',
        `unknown command ${JSON.stringify(name)}.${guess ? ` Did you mean \`shimkit ${guess}\`?` : ''} Commands: ${COMMANDS.map((c) => c.name).join(', ')}.`,
      ),
      undefined,
    );
  }
  let module: CommandModule;
  try {
    if (serverForm(entry.name, rest)) {
      // Straight to the server's form: the mock's enqueue (and the core it bundles) is not read;
      // enqueue has a module of its own, with only what it needs.
      if (entry.name === 'enqueue') {
        const form = (await load({ ...entry, module: 'server-enqueue' })) as unknown as {
          enqueueForm: CommandModule;
        };
        return form.enqueueForm.exec(entry.name, rest);
      }
      const server = (await load({ ...entry, module: 'server' })) as CommandModule & {
        serverForms: CommandModule;
      };
      return server.serverForms.exec(entry.name, rest);
    }
    module = await load(entry);
  } catch (error) {
    return report(error, undefined); // a damaged install: exit 70, with the missing file's name
  }
  return module.exec(entry.name, rest);
}

/**
 * `shimkit enqueue D …` or `verify D …` with D first and a server's dir
 * (its server.json there): the common case, checked without loading any
 * module. Any other order takes the long way (the command's own module
 * finds D and hands over to the server's), so this changes no meaning.
 */
function serverForm(name: string, rest: readonly string[]): boolean {
  const first = rest[0];
  if ((name !== 'enqueue' && name !== 'verify') || first === undefined || first.startsWith('-'))
    return false;
  return existsSync(join(first, 'server.json'));
}

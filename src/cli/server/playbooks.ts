import { InvalidOptionError } from 'shimkit';
import { parseArgs, positionals } from '../args.js';
import type { Command } from '../command.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { plural } from '../words.js';
import { ask } from './control.js';
import { ownServerDir, serverDir } from './dir.js';
import { readPlaybookFile } from './playbook-file.js';

/**
 * Agent playbooks from any language (PB-07): `shimkit playbook D FILE`
 * adds one to a running `shimkit serve`; `shimkit tool-calls D` and
 * `shimkit tool-results D` read back what the model called and what the
 * agent sent back (`--json` for tests in pytest, Go or bats).
 */

/** A tool call or result as the server's control answers (ToolCallRecord, ToolResultRecord). */
interface RecordOut {
  step: number;
  turn: number;
  toolName: string;
  toolCallId: string;
  seq: number;
  params?: unknown;
  text?: string;
  isError?: boolean;
}

/** A playbook as the server's control answers (host.ts `playbookJson`). */
interface PlaybookJsonOut {
  name: string;
  consumed: number;
  total: number;
  done: boolean;
  toolCalls: RecordOut[];
  toolResults: RecordOut[];
  report: string | null;
}

const FORM = `A playbook file is JSON:
  {"name": "deploy",                                  (optional; default playbook#<n>)
   "match": {"headers": {"x-agent": "a"}},            (optional: which model requests it takes)
   "turns": [
     {"when": "List files in the project",            (the prompt; or {"regex":"…","flags":"i"}, {"any":true})
      "do": [{"calls": "bash", "params": {"command": "ls"}},
             {"parallel": [{"calls": "read", "params": {"path": "a"}},
                           {"calls": "read", "params": {"path": "b"}}]},
             {"says": "Found 2 files."}]}]}
Each action answers one model request (POST /v1/chat/completions, /v1/responses or
/v1/messages, also without /v1) in that endpoint's format, streamed when it asks.`;

/** `shimkit playbook D FILE`: add a playbook to the running server. */
export const playbookCommand: Command = {
  name: 'playbook',
  usage: 'shimkit playbook D FILE',
  help: `Add a playbook to the mock server running in D (shimkit serve): it plays the model
for the agent under test, one action per model request, and checks the conversation: a
turn's first request must carry its prompt as the last user text, each later one a result
for every tool call of the answer before (else a 500 saying what was expected). FILE \`-\`
reads it from stdin. Prints its name and size. \`shimkit verify D\` fails until it was
played through; \`shimkit tool-calls D\` and \`shimkit tool-results D\` read it back.

${FORM}

Examples:
  shimkit playbook "$D" agent.json
  echo '{"turns":[{"when":"hi","do":[{"says":"Hello!"}]}]}' | shimkit playbook "$D" -`,
  async run(argv) {
    const args = parseArgs('playbook', argv, {});
    const [d, file] = positionals('playbook', args, ['D', 'FILE']) as [string, string];
    const dir = ownServerDir(d, false);
    const { path, json } = readPlaybookFile('playbook', file);
    let added: { name: string; total: number };
    try {
      added = (await ask(dir, { op: 'playbook', playbook: json })) as typeof added;
    } catch (error) {
      // The server's check names the key; the file is the command's to name (as serve --playbook does).
      if (!(error instanceof InvalidOptionError)) throw error;
      throw new InvalidOptionError(
        `${path === '-' ? 'the playbook on stdin' : path}: ${error.message}`,
      );
    }
    process.stdout.write(`${added.name}: ${plural(added.total, 'action')}\n`);
    return ExitCode.ok;
  },
};

const READ_FLAGS = {
  playbook: { kind: 'value', value: 'NAME' },
  tool: { kind: 'value', value: 'NAME' },
  json: { kind: 'switch' },
} as const;

/** `shimkit tool-calls D`: the tool calls the playbooks answered with. */
export const toolCallsCommand: Command = {
  name: 'tool-calls',
  usage: 'shimkit tool-calls D [--playbook NAME] [--tool NAME] [--json]',
  help: `Print the tool calls the playbooks of the mock server in D answered with, in order,
one line each:
  playbook#1 step 1 turn 1 #1 bash call_shimkit_p1_s1_1 {"command":"ls"}
(the playbook, the step and turn, the request's seq, the tool, the call's id, the params as
sent).

Options:
  --playbook NAME   only this playbook's
  --tool NAME       only calls of this tool
  --json            a JSON array instead, one object per call: {"playbook","step","turn",
                    "toolName","toolCallId","params","seq"}

Examples:
  shimkit tool-calls "$D"
  shimkit tool-calls "$D" --tool bash --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["params"])'`,
  run: (argv) => readRecords('tool-calls', argv),
};

/** `shimkit tool-results D`: the tool results the agent sent back. */
export const toolResultsCommand: Command = {
  name: 'tool-results',
  usage: 'shimkit tool-results D [--playbook NAME] [--tool NAME] [--json]',
  help: `Print the tool results the agent under test sent back to the playbooks of the mock
server in D, in order of arrival, one line each:
  playbook#1 step 1 turn 1 #2 bash call_shimkit_p1_s1_1 → "file1.txt\\nfile2.txt"
(the step and turn of the call it answers, the seq of the request that carried it, the
tool, the call's id, the text; "error" when the agent flagged it so).

Options:
  --playbook NAME   only this playbook's
  --tool NAME       only results of this tool
  --json            a JSON array instead, one object per result: {"playbook","step","turn",
                    "toolName","toolCallId","text" (the text parts joined),"content" (as
                    sent),"isError","seq"}

Examples:
  shimkit tool-results "$D"
  shimkit tool-results "$D" --tool bash --json`,
  run: (argv) => readRecords('tool-results', argv),
};

async function readRecords(
  command: 'tool-calls' | 'tool-results',
  argv: readonly string[],
): Promise<number> {
  const args = parseArgs(command, argv, READ_FLAGS);
  const dir = serverDir(command, args);
  const { playbooks } = (await ask(dir, { op: 'playbooks' })) as { playbooks: PlaybookJsonOut[] };
  const only = args.values.get('playbook');
  if (only !== undefined && !playbooks.some((p) => p.name === only)) {
    throw new UsageError(
      command,
      `no playbook named ${JSON.stringify(only)} on the server in ${dir}; it has ${playbooks.length === 0 ? 'none' : playbooks.map((p) => p.name).join(', ')}.`,
    );
  }
  const tool = args.values.get('tool');
  const records = playbooks
    .filter((p) => only === undefined || p.name === only)
    .flatMap((p) =>
      (command === 'tool-calls' ? p.toolCalls : p.toolResults).map((r) => ({
        playbook: p.name,
        ...r,
      })),
    )
    .filter((r) => tool === undefined || r.toolName === tool);
  if (args.switches.has('json')) {
    process.stdout.write(`${JSON.stringify(records)}\n`);
    return ExitCode.ok;
  }
  for (const r of records) {
    const head = `${r.playbook} step ${r.step} turn ${r.turn} #${r.seq} ${r.toolName} ${r.toolCallId}`;
    const tail =
      command === 'tool-calls'
        ? JSON.stringify(r.params)
        : `→ ${shown(String(r.text))}${r.isError === true ? ' error' : ''}`;
    process.stdout.write(`${head} ${tail}\n`);
  }
  return ExitCode.ok;
}

/** A result's text on one line: its JSON string, cut at 200 characters (never inside a surrogate pair). */
function shown(text: string): string {
  const json = JSON.stringify(text);
  if (json.length <= 200) return json;
  const end = /[\uD800-\uDBFF]/.test(json[198] ?? '') ? 198 : 199;
  return `${json.slice(0, end)}…`;
}

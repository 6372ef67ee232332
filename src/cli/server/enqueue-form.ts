import { parseArgs } from '../args.js';
import type { Command } from '../command.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { commandModule } from '../run.js';
import { readJsonlFlag } from './batch.js';
import { ask } from './control.js';
import { serverDir } from './dir.js';
import { hasResponseFlags, SERVER_ENQUEUE_FLAGS } from './flags.js';
import { buildServerResponse, RESPONSE_FLAGS_HELP } from './responses.js';

/**
 * `shimkit enqueue D` on a server dir, in a module of its own
 * (dist/cli/server-enqueue.js): the command a test calls most, so the
 * dispatcher loads only this and what it needs (the response builders and
 * the control channel), not the other server commands (HT-17).
 */

export function times(command: string, text: string | undefined): number | 'always' | undefined {
  if (text === undefined) return undefined;
  if (text !== 'always' && !/^[1-9]\d*$/.test(text)) {
    throw new UsageError(
      command,
      `--times takes a count >= 1 or "always", got ${JSON.stringify(text)}.`,
    );
  }
  return text === 'always' ? 'always' : Number(text);
}

/** `shimkit enqueue D RESPONSE` for a server dir (D/server.json): one response at the end of its queue. */
export const serverEnqueueCommand: Command = {
  name: 'enqueue',
  usage:
    'shimkit enqueue D (--sse-chat TEXT | --sse-responses TEXT | --sse-messages TEXT | --status N | --json RESPONSE) [--delay MS] ...',
  help: `With D a mock server's dir (shimkit serve): add a response to the end of its queue.
A request no expectation (shimkit expect) takes gets the queue's first unused response.

  --times N|always       answer N requests (default 1), or every one from then on
  --optional             \`verify\` does not ask for it to be used
  --jsonl FILE           add many responses at once, in order: one MockServerResponse
                         JSON object per line of FILE ("-": stdin), each with its own
                         "times" and "optional" if any; no other flag goes with it. One
                         call for 600 responses takes a few ms more than one for 1.

${RESPONSE_FLAGS_HELP}

Examples:
  shimkit enqueue "$D" --sse-chat 'Hello from the mock'
  shimkit enqueue "$D" --status 429 --retry-after-ms 1
  shimkit enqueue "$D" --json '{"status":200,"json":{"data":[]}}'
  jq -c '.[]' responses.json | shimkit enqueue "$D" --jsonl -`,
  async run(argv) {
    const args = parseArgs('enqueue', argv, SERVER_ENQUEUE_FLAGS);
    const dir = serverDir('enqueue', args);
    const file = args.values.get('jsonl');
    if (file !== undefined) {
      if (hasResponseFlags(args) || args.values.has('times') || args.switches.has('optional')) {
        throw new UsageError(
          'enqueue',
          '--jsonl gives whole responses: put "times", "optional" and the rest in each line, not in flags.',
        );
      }
      const responses = readJsonlFlag('enqueue', file);
      await ask(dir, { op: 'enqueue', responses });
      return ExitCode.ok;
    }
    const response = buildServerResponse('enqueue', args);
    const n = times('enqueue', args.values.get('times'));
    if (n !== undefined) response.times = n;
    if (args.switches.has('optional')) response.optional = true;
    await ask(dir, { op: 'enqueue', responses: [response] });
    return ExitCode.ok;
  },
};

/** The module the dispatcher runs for `shimkit enqueue D` with D a server's dir. */
export const enqueueForm = commandModule(serverEnqueueCommand);

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { ShimkitError } from 'shimkit';
import { milliseconds, parseArgs, positionals } from '../args.js';
import type { Command } from '../command.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { commandModule } from '../run.js';
import { readJsonlFlag } from './batch.js';
import { ask, askLines } from './control.js';
import {
  isAlive,
  isServerDir,
  ownServerDir,
  readServerInfo,
  SERVER_JSON,
  serverDir,
} from './dir.js';
import { serverEnqueueCommand, times } from './enqueue-form.js';
import { hasResponseFlags, RESPONSE_FLAGS } from './flags.js';
import { holdCommand, releaseCommand, timedOut } from './holds.js';
import { requestsCommand, serverVerifyCommand } from './log.js';
import { playbookCommand, toolCallsCommand, toolResultsCommand } from './playbooks.js';
import { buildServerResponse, RESPONSE_FLAGS_HELP, readJsonFlag } from './responses.js';

/**
 * The commands that talk to a running `shimkit serve` through its dir:
 * `expect`, `enqueue` and `verify` on a server dir, `requests`, `stop`,
 * `reset`, `wait-requests`, `hold` and `release` (holds.ts), and the
 * playbooks' `playbook`, `tool-calls`, `tool-results`.
 */

/** How long `shimkit stop` waits for the server's process to end. */
const STOP_MS = 10_000;

const TIMES = {
  times: { kind: 'value', value: 'N|always' },
  optional: { kind: 'switch' },
} as const;

/** `shimkit expect D --path P … RESPONSE`: answer requests that fit with this response. */
export const expectCommand: Command = {
  name: 'expect',
  usage:
    'shimkit expect D (--path P [--method M] [--match-json J] [--name N] [--times N] [--optional] (--sse-chat TEXT | --status N | --json RESPONSE | ...) | --jsonl FILE)',
  help: `Tell the mock server running in D (shimkit serve) to answer requests that fit with a
response. Expectations are tried in the order they were added, before the queue that
\`shimkit enqueue D\` fills; each answers --times requests (default 1), exactly once each.

Match:
  --path P               the request's path, without the query (required)
  --method M             its method (any case; default any)
  --match-json J         its JSON body contains J: objects by key, arrays element by element
  --name N               the name in \`shimkit requests\` and reports (default expect#<n>)
  --times N|always       answer N requests (default 1), or every one that fits
  --optional             \`verify\` does not ask for it to be used
  --jsonl FILE           add many expectations in one call, in order: one JSON object per
                         line of FILE ("-": stdin), {"match":{"path":…,"method":…,"json":…},
                         "response":{…},"name":…,"times":…,"optional":…}; no other flag goes
                         with it. A bad line stops there: the lines before it were added

${RESPONSE_FLAGS_HELP}

Examples:
  shimkit expect "$D" --path /v1/chat/completions --sse-chat 'Hello!'
  shimkit expect "$D" --jsonl expectations.jsonl
  shimkit expect "$D" --method POST --path /v1/messages --match-json '{"stream":true}' --sse-messages Hi
  shimkit expect "$D" --path /v1/responses --status 429 --retry-after-ms 10 --name limited
  shimkit expect "$D" --path /v1/chat/completions --sse-chat Hel --sse-chat lo --cut-after-events 2 --cut rst`,
  async run(argv) {
    const args = parseArgs('expect', argv, {
      path: { kind: 'value', value: 'P' },
      method: { kind: 'value', value: 'M' },
      'match-json': { kind: 'value', value: 'J' },
      name: { kind: 'value', value: 'N' },
      ...TIMES,
      ...RESPONSE_FLAGS,
      jsonl: { kind: 'value', value: 'FILE' },
    });
    const dir = serverDir('expect', args);
    const file = args.values.get('jsonl');
    if (file !== undefined) {
      const others = ['path', 'method', 'match-json', 'name', 'times'].filter((f) =>
        args.values.has(f),
      );
      if (others.length > 0 || hasResponseFlags(args) || args.switches.has('optional')) {
        throw new UsageError(
          'expect',
          '--jsonl gives whole expectations: put "match", "response", "name", "times" and "optional" in each line, not in flags.',
        );
      }
      const expectations = readJsonlFlag('expect', file).map((line, i) => {
        const { match, response, ...options } = line;
        if (typeof match !== 'object' || match === null || response === undefined) {
          throw new UsageError(
            'expect',
            `--jsonl ${file}: object ${i + 1} needs "match" (an object such as {"path":"/v1/models"}) and "response", got ${JSON.stringify(line).slice(0, 80)}.`,
          );
        }
        return { match: match as Record<string, unknown>, response, options };
      });
      await ask(dir, { op: 'expect-many', expectations });
      return ExitCode.ok;
    }
    const path = args.values.get('path');
    if (path === undefined) {
      throw new UsageError(
        'expect',
        'which path? Pass --path P, e.g. --path /v1/chat/completions.',
      );
    }
    const match: Record<string, unknown> = { path };
    const method = args.values.get('method');
    if (method !== undefined) match.method = method;
    const json = args.values.get('match-json');
    if (json !== undefined) match.json = readJsonFlag('expect', '--match-json', json);
    const options: Record<string, unknown> = {};
    const name = args.values.get('name');
    if (name !== undefined) options.name = name;
    const n = times('expect', args.values.get('times'));
    if (n !== undefined) options.times = n;
    if (args.switches.has('optional')) options.optional = true;
    const response = buildServerResponse('expect', args);
    await ask(dir, { op: 'expect', match, response, options });
    return ExitCode.ok;
  },
};

/** `shimkit reset D`: forget the script and the log, as `api.reset()`. */
export const resetCommand: Command = {
  name: 'reset',
  usage: 'shimkit reset D',
  help: `Reset the mock server in D (shimkit serve) as a new one would be, without a restart: its
expectations, queue, holds and playbooks are forgotten, and its log is emptied (\`requests\`
counts from #1 again). Held requests end (a 504, or a body cut short after the headers);
a \`wait-requests\` or \`release --wait\` waiting on the old script fails. A --playbook of
\`serve\` is gone too; a replayed --cassette is scripted again.

Examples:
  shimkit reset "$D"
  setup() { shimkit reset "$API"; }   # one server for a whole bats file`,
  async run(argv) {
    const args = parseArgs('reset', argv, {});
    const dir = serverDir('reset', args);
    await ask(dir, { op: 'reset' });
    return ExitCode.ok;
  },
};

/** `shimkit wait-requests D N`: wait until the log has N requests. */
export const waitRequestsCommand: Command = {
  name: 'wait-requests',
  usage: 'shimkit wait-requests D N [--timeout MS]',
  help: `Wait until the mock server in D (shimkit serve) received N requests (since it started, or
since \`shimkit reset D\`), then exit 0; after --timeout (default 4s), print what came on
stderr and exit 1. For a program under test that runs in the background.

Options:
  --timeout MS   how long to wait: 500, 500ms, 2.5s (default 4s)

Examples:
  ./agent.sh & shimkit wait-requests "$D" 3 --timeout 10s && shimkit requests "$D"`,
  async run(argv) {
    const args = parseArgs('wait-requests', argv, { timeout: { kind: 'value', value: 'MS' } });
    const [given, count] = positionals('wait-requests', args, ['D', 'N']) as [string, string];
    const dir = ownServerDir(given, false);
    if (!/^\d+$/.test(count) || !Number.isSafeInteger(Number(count))) {
      throw new UsageError(
        'wait-requests',
        `N is a count of requests (0 or more), got ${JSON.stringify(count)}.`,
      );
    }
    const timeout = args.values.get('timeout');
    const timeoutMs =
      timeout === undefined ? WAIT_MS : milliseconds('wait-requests', '--timeout', timeout);
    try {
      await askLines(
        dir,
        { op: 'wait-requests', n: Number(count), timeoutMs },
        undefined,
        timeoutMs + 5000,
      );
    } catch (error) {
      return timedOut('wait-requests', error);
    }
    return ExitCode.ok;
  },
};

/** The default wait of `wait-requests`, as the library's. */
const WAIT_MS = 4000;

/** `shimkit stop D`: end the server, and wait until its process is gone. */
export const stopCommand: Command = {
  name: 'stop',
  usage: 'shimkit stop D',
  help: `Stop the mock server running in D (shimkit serve): it closes its connections, removes
D/server.json and D/control.sock, and exits; this waits until its process is gone (at most
${STOP_MS / 1000} s), then prints one line and exits 0. Nothing running there is an error (exit 3).

Examples:
  shimkit stop "$D"
  teardown() { shimkit stop "$BATS_TEST_TMPDIR/api"; }`,
  async run(argv) {
    const args = parseArgs('stop', argv, {});
    const dir = resolve(positionals('stop', args, ['D'])[0] as string);
    if (!isServerDir(dir)) {
      throw new ShimkitError(
        'ERR_SHIMKIT_NO_SERVER',
        `nothing to stop: no mock server runs in ${dir} (${existsSync(dir) ? `it has no ${SERVER_JSON}` : 'it does not exist'}).`,
      );
    }
    ownServerDir(dir, false);
    const info = readServerInfo(dir);
    await ask(dir, { op: 'stop' });
    const deadline = Date.now() + STOP_MS;
    while (isAlive(info.pid)) {
      if (Date.now() > deadline) {
        throw new ShimkitError(
          'ERR_SHIMKIT_SERVER_STOP',
          `the mock server of ${dir} (pid ${info.pid}) was asked to stop but still runs after ${STOP_MS} ms; end it with: kill ${info.pid}`,
        );
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    process.stdout.write(`stopped: mock server ${info.url} (pid ${info.pid})\n`);
    return ExitCode.ok;
  },
};

export const { exec, help } = commandModule(
  expectCommand,
  requestsCommand,
  stopCommand,
  resetCommand,
  waitRequestsCommand,
  holdCommand,
  releaseCommand,
  playbookCommand,
  toolCallsCommand,
  toolResultsCommand,
);
/** The server forms of `enqueue` and `verify`, run with their own usage and help. */
export const serverForms = commandModule(serverEnqueueCommand, serverVerifyCommand);
export { serverEnqueueCommand };

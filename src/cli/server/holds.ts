import { ShimkitError } from 'shimkit';
import { milliseconds, parseArgs, positionals } from '../args.js';
import type { Command } from '../command.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { askLines } from './control.js';
import { ownServerDir, serverDir } from './dir.js';
import { hasResponseFlags, RESPONSE_FLAGS } from './flags.js';
import { buildServerResponse, RESPONSE_FLAGS_HELP, readJsonFlag } from './responses.js';

/**
 * Barriers from the CLI (HT-06, HT-17): `shimkit hold D` pauses the
 * response to the next request that fits, `shimkit release D` lets it go
 * (or serves another). The server keeps its holds by name until `reset`.
 */

/** How much longer than the server's wait a command waits for its answer. */
const MARGIN_MS = 5000;
const DEFAULT_WAIT_MS = 4000;

/** `shimkit hold D [match flags]`: pause the response to the next request that fits. */
export const holdCommand: Command = {
  name: 'hold',
  usage: 'shimkit hold D [--path P] [--method M] [--match-json J] [--after-events N] [--name NAME]',
  help: `Tell the mock server in D (shimkit serve) to pause the response to the next request that
fits (any request without match flags), arriving after this returns: before its headers, or
after --after-events N SSE events. The request is claimed as usual (expectations, queue,
unmatched); only its response waits, until \`shimkit release D\` (or the server's timeout: a
504 before the headers, the connection cut after them). Prints the hold's name.

Options:
  --path P               the request's path, without the query
  --method M             its method (any case)
  --match-json J         its JSON body contains J
  --after-events N       pause after N events (0: right after the headers); default before them
  --name NAME            the hold's name for \`release\` (default hold#<n>, counted from 1
                         again after \`shimkit reset D\`)

Examples:
  shimkit hold "$D" --path /v1/chat/completions --after-events 2
  ./agent.sh & shimkit release "$D" --wait blocked --timeout 5s; wait`,
  async run(argv) {
    const args = parseArgs('hold', argv, {
      path: { kind: 'value', value: 'P' },
      method: { kind: 'value', value: 'M' },
      'match-json': { kind: 'value', value: 'J' },
      'after-events': { kind: 'value', value: 'N' },
      name: { kind: 'value', value: 'NAME' },
    });
    const dir = serverDir('hold', args);
    const match: Record<string, unknown> = {};
    const path = args.values.get('path');
    if (path !== undefined) match.path = path;
    const method = args.values.get('method');
    if (method !== undefined) match.method = method;
    const json = args.values.get('match-json');
    if (json !== undefined) match.json = readJsonFlag('hold', '--match-json', json);
    const options: Record<string, unknown> = {};
    const after = args.values.get('after-events');
    if (after !== undefined) {
      if (!/^\d+$/.test(after)) {
        throw new UsageError(
          'hold',
          `--after-events takes a count of events (0 or more), got ${JSON.stringify(after)}.`,
        );
      }
      options.afterEvents = Number(after);
    }
    const name = args.values.get('name');
    if (name !== undefined) {
      if (name === '' || /^\d+$/.test(name)) {
        throw new UsageError(
          'hold',
          `--name takes a name with a letter in it (a bare number is a hold's id), got ${JSON.stringify(name)}.`,
        );
      }
      options.name = name;
    }
    const answer = await askLines(
      dir,
      {
        op: 'hold',
        ...(Object.keys(match).length > 0 ? { match } : {}),
        options,
      },
      undefined,
    );
    process.stdout.write(`${answer.name as string}\n`);
    return ExitCode.ok;
  },
};

/** `shimkit release D [NAME] [response flags]`: let a held response go on, or serve another. */
export const releaseCommand: Command = {
  name: 'release',
  usage:
    'shimkit release D [NAME|N] [--wait received|blocked] [--timeout MS] [--sse-chat TEXT | --status N | --json RESPONSE | ...]',
  help: `Release a hold of the mock server in D (shimkit hold): its response goes on, or, with
response flags, that response is served instead. NAME is the name \`shimkit hold\` printed
(or N for hold#N); without it, the oldest hold not released yet. A release before the request
came lets it pass without pausing; --wait first waits for it.

Options:
  --wait received        first wait until a request fitting the hold came
  --wait blocked         first wait until its response is paused at the hold point
  --timeout MS           how long --wait waits (default 4s); then exit 1, nothing released
${RESPONSE_FLAGS_HELP.replace('Response (one of):', 'Replacement response (optional; one of):')}
  After the headers (a hold with --after-events), a replacement may only carry more body
  (--json '{"sse":[…]}' with "eventDelayMs" or "cut").

Examples:
  shimkit release "$D"
  shimkit release "$D" slow --wait blocked --status 503`,
  async run(argv) {
    const args = parseArgs('release', argv, {
      wait: { kind: 'value', value: 'received|blocked' },
      timeout: { kind: 'value', value: 'MS' },
      ...RESPONSE_FLAGS,
    });
    const [given, name] = positionals('release', args, ['D'], ['NAME']) as [
      string,
      string | undefined,
    ];
    const dir = ownServerDir(given, false);
    const wait = args.values.get('wait');
    if (wait !== undefined && wait !== 'received' && wait !== 'blocked') {
      throw new UsageError(
        'release',
        `--wait takes "received" or "blocked", got ${JSON.stringify(wait)}.`,
      );
    }
    const timeout = args.values.get('timeout');
    if (timeout !== undefined && wait === undefined) {
      throw new UsageError('release', '--timeout goes with --wait received|blocked.');
    }
    const timeoutMs =
      timeout === undefined ? DEFAULT_WAIT_MS : milliseconds('release', '--timeout', timeout);
    const response = hasResponseFlags(args) ? buildServerResponse('release', args) : undefined;
    try {
      await askLines(
        dir,
        {
          op: 'release',
          ...(name === undefined ? {} : { hold: name }),
          ...(response === undefined ? {} : { response }),
          ...(wait === undefined ? {} : { wait, timeoutMs }),
        },
        undefined,
        timeoutMs + MARGIN_MS,
      );
    } catch (error) {
      return timedOut('release', error);
    }
    return ExitCode.ok;
  },
};

/** A wait of the server that timed out: its message on stderr, exit 1 (the test's condition failed). */
export function timedOut(command: string, error: unknown): number {
  if (!(error instanceof ShimkitError) || error.code !== 'ERR_SHIMKIT_WAIT_TIMEOUT') throw error;
  process.stderr.write(`shimkit ${command}: ${error.message}\n`);
  return ExitCode.failed;
}

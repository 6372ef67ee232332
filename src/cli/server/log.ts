import { ShimkitError } from 'shimkit';
import { parseArgs } from '../args.js';
import type { Command } from '../command.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { plural, shQuote } from '../words.js';
import { ask, askLines } from './control.js';
import { serverDir } from './dir.js';

/** What a running `shimkit serve` got: `shimkit requests D`, and `shimkit verify D` on a server dir. */

/** A log entry as `requests --jsonl` prints it (host.ts `requestJson`). */
interface RequestJson {
  seq: number;
  method: string;
  path: string;
  query: Record<string, string>;
  claimedBy: string | null;
  error: string | null;
  response: { status: number | null; bytesSent: number; events: number; endedBy: string | null };
}

/** `shimkit requests D`: the server's request log, streamed. */
export const requestsCommand: Command = {
  name: 'requests',
  usage: 'shimkit requests D [--json | --jsonl] [--since SEQ] [--limit N]',
  help: `Print the requests the mock server in D received, in arrival order, one line each:
  #1 POST /v1/chat/completions → 200 sse 6 events complete (plan)
  #2 GET /v1/models → 500 362 bytes complete (unmatched)
(the status, what was sent, how it ended: complete, cut or client-abort, and what answered
it: the expectation's name, fifo#<n>, unmatched, or "refused: no token" under --require-token).
The server streams the log entry by entry, so a long one costs neither side its size in
memory; --since and --limit read a part.

Options:
  --jsonl        print one JSON object per line, one per request: {"seq","method","path",
                 "query","headers" (lower-case names),"body" (text; "bodyBase64" when it is
                 not UTF-8),"bodyBytes","bodyTruncated","bodyDropped","json" (the parsed
                 body, or null),"receivedAt","claimedBy","error","response":{"status",
                 "bytesSent","events","endedBy","startedAt","endedAt"}}
  --json         print the same objects as one JSON array
  --since SEQ    only the requests after #SEQ (0: all; the default)
  --limit N      at most N requests (the first N after --since)

What the server keeps: each body up to --log-body-bytes (default 1 MiB, then
"bodyTruncated"), and the bodies of all requests up to --log-body-budget (default 64 MiB):
past it the oldest lose their body ("bodyDropped": true; "bodyBytes" and the rest stay),
and this command says how many on stderr (see \`shimkit serve --help\`).

Examples:
  shimkit requests "$D"
  shimkit requests "$D" --jsonl --since 100 --limit 10
  shimkit requests "$D" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["json"]["model"])'`,
  async run(argv) {
    const args = parseArgs('requests', argv, {
      json: { kind: 'switch' },
      jsonl: { kind: 'switch' },
      since: { kind: 'value', value: 'SEQ' },
      limit: { kind: 'value', value: 'N' },
    });
    const dir = serverDir('requests', args);
    const json = args.switches.has('json');
    const jsonl = args.switches.has('jsonl');
    if (json && jsonl) {
      throw new UsageError(
        'requests',
        'give --json (an array) or --jsonl (a line each), not both.',
      );
    }
    const since = count('--since', args.values.get('since'), 0);
    const limit = count('--limit', args.values.get('limit'), 1);
    let n = 0;
    const onLine = (line: string): Promise<void> | undefined => {
      let text: string;
      if (jsonl) text = `${line}\n`;
      else if (json) text = `${n === 0 ? '[' : ',\n'}${line}`;
      else text = `${describeRequest(JSON.parse(line) as RequestJson)}\n`;
      n++;
      return write(text);
    };
    const head = (await askLines(
      dir,
      {
        op: 'requests',
        ...(since === undefined ? {} : { since }),
        ...(limit === undefined ? {} : { limit }),
      },
      onLine,
    )) as { count: number; bodiesDropped: number };
    if (json) await write(n === 0 ? '[]\n' : ']\n');
    if (n !== head.count) {
      throw new ShimkitError(
        'ERR_SHIMKIT_SERVER_CONTROL',
        `the mock server of ${dir} sent ${n} of the ${head.count} requests it announced (did it stop?).`,
      );
    }
    if (head.bodiesDropped > 0 && (json || jsonl)) {
      process.stderr.write(
        `shimkit requests: the bodies of the ${plural(head.bodiesDropped, 'oldest request')} were dropped to keep the server within its --log-body-budget ("bodyDropped": true).\n`,
      );
    }
    return ExitCode.ok;
  },
};

/** A count flag (an integer from `min`), or undefined when not given. */
function count(flag: string, text: string | undefined, min: number): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < min || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(
      'requests',
      `${flag} takes a whole number from ${min}, got ${JSON.stringify(text)}.`,
    );
  }
  return Number(text);
}

/** Write to stdout; a promise when it is full (the socket then waits for it). */
function write(text: string): Promise<void> | undefined {
  if (process.stdout.write(text)) return undefined;
  return new Promise((resolve) => process.stdout.once('drain', resolve));
}

export function describeRequest(r: RequestJson): string {
  const query = new URLSearchParams(r.query).toString();
  const what =
    r.method === '' ? '(malformed HTTP)' : `${r.method} ${r.path}${query ? `?${query}` : ''}`;
  const { status, events, bytesSent, endedBy } = r.response;
  const sent = events > 0 ? `sse ${plural(events, 'event')}` : plural(bytesSent, 'byte');
  const answer =
    status === null ? 'no response yet' : `${status} ${sent} ${endedBy ?? 'in progress'}`;
  // A request refused for want of the token (HT-15) took nothing: it was not unmatched either.
  const refused =
    r.claimedBy === null && r.response.status === 401 && /^shimkit: refused /.test(r.error ?? '');
  return `#${r.seq} ${what} → ${answer} (${r.claimedBy ?? (refused ? 'refused: no token' : 'unmatched')})`;
}

/** `shimkit verify D` for a server dir: every scripted response used (and, --strict, every request answered). */
export const serverVerifyCommand: Command = {
  name: 'verify',
  usage: 'shimkit verify D [--json]',
  help: `With D a mock server's dir (shimkit serve): exit 1, with the report on stderr, if a
response of \`shimkit expect\` or \`shimkit enqueue\` was not used as often as scripted
(--optional ones aside), a playbook (\`shimkit playbook\`, \`serve --playbook\`) was not
played through or refused a request, or, for a server started with --strict, a request
had no scripted response. Otherwise print one "ok" line and exit 0.

Options:
  --json   print {"ok","url","requests","report"} on stdout instead ("report" null when ok)

Examples:
  shimkit verify "$D"`,
  async run(argv) {
    const args = parseArgs('verify', argv, { json: { kind: 'switch' } });
    const dir = serverDir('verify', args);
    const r = (await ask(dir, { op: 'verify' })) as {
      done: boolean;
      url: string;
      requests: number;
      report: string | null;
    };
    if (args.switches.has('json')) {
      process.stdout.write(
        `${JSON.stringify({ ok: r.done, url: r.url, requests: r.requests, report: r.report })}\n`,
      );
    } else if (r.done) {
      process.stdout.write(
        `ok: mock server ${r.url}, ${plural(r.requests, 'request')}, every response used\n`,
      );
    } else process.stderr.write(`${inCliWords(r.report as string, dir)}\n`);
    return r.done ? ExitCode.ok : ExitCode.failed;
  },
};

/**
 * The commands that answer a request nothing answered (`unmatchedAdvice`
 * of a `shimkit serve`, so its 500 and its log entry say them): the
 * `shimkit expect` that would take it, or an `enqueue`.
 */
export function cliAdvice(dir: string): string {
  return `shimkit expect ${shQuote(dir)} --method {method} --path {shPath} --sse-chat TEXT (or --status N, --json RESPONSE), or shimkit enqueue ${shQuote(dir)} --sse-chat TEXT`;
}

/**
 * The library's advice in the words of the commands that give it: for an
 * unmatched request `shimkit expect D …` (a server of this version already
 * says so: cliAdvice); for a playbook (PB-07) the variables `shimkit serve`
 * printed and `shimkit tool-results D`.
 */
export function inCliWords(report: string, dir: string): string {
  return report
    .replace(
      /api\.expect\(\{ method: '([A-Z]+)', path: '([^']*)' \}, …\) or api\.enqueue\(…\)/g,
      (_, method: string, path: string) =>
        cliAdvice(dir)
          .replace('{method}', () => method)
          .replace('{shPath}', () => shQuote(path)),
    )
    .replaceAll(
      'that the agent uses this server (env()).',
      'that the agent uses this server (the variables `shimkit serve` printed).',
    )
    .replaceAll(
      "the playbook's toolResults() (from the CLI: shimkit tool-results).",
      `shimkit tool-results ${shQuote(dir)}.`,
    );
}

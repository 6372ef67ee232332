import { parseArgs } from '../args.js';
import type { Command } from '../command.js';
import { ExitCode } from '../exit-codes.js';
import { plural, shQuote } from '../words.js';
import { ask } from './control.js';
import { serverDir } from './dir.js';

/** What a running `shimkit serve` got: `shimkit requests D`, and `shimkit verify D` on a server dir. */

/** A log entry as `requests --json` prints it (host.ts `requestJson`). */
interface RequestJson {
  seq: number;
  method: string;
  path: string;
  query: Record<string, string>;
  claimedBy: string | null;
  error: string | null;
  response: { status: number | null; bytesSent: number; events: number; endedBy: string | null };
}

/** `shimkit requests D`: the server's request log. */
export const requestsCommand: Command = {
  name: 'requests',
  usage: 'shimkit requests D [--json]',
  help: `Print the requests the mock server in D received, in arrival order, one line each:
  #1 POST /v1/chat/completions → 200 sse 6 events complete (plan)
  #2 GET /v1/models → 500 362 bytes complete (unmatched)
(the status, what was sent, how it ended: complete, cut or client-abort, and what answered
it: the expectation's name, fifo#<n>, unmatched, or "refused: no token" under --require-token).

Options:
  --json   print a JSON array instead, one object per request: {"seq","method","path",
           "query","headers" (lower-case names),"body" (text; "bodyBase64" when it is not
           UTF-8),"bodyBytes","bodyTruncated","json" (the parsed body, or null),"receivedAt",
           "claimedBy","error","response":{"status","bytesSent","events","endedBy",
           "startedAt","endedAt"}}

Examples:
  shimkit requests "$D"
  shimkit requests "$D" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["json"]["model"])'`,
  async run(argv) {
    const args = parseArgs('requests', argv, { json: { kind: 'switch' } });
    const dir = serverDir('requests', args);
    const { requests } = (await ask(dir, { op: 'requests' })) as { requests: RequestJson[] };
    if (args.switches.has('json')) {
      process.stdout.write(`${JSON.stringify(requests)}\n`);
      return ExitCode.ok;
    }
    for (const request of requests) process.stdout.write(`${describeRequest(request)}\n`);
    return ExitCode.ok;
  },
};

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
 * The library's advice in the words of the commands that give it: for an
 * unmatched request `shimkit expect D …`; for a playbook (PB-07) the
 * variables `shimkit serve` printed and `shimkit tool-results D`.
 */
export function inCliWords(report: string, dir: string): string {
  return report
    .replace(
      /api\.expect\(\{ method: '([A-Z]+)', path: '([^']*)' \}, …\) or api\.enqueue\(…\)/g,
      (_, method: string, path: string) =>
        `shimkit expect ${shQuote(dir)} --method ${method} --path ${shQuote(path)} --sse-chat … (or --status, --json) or shimkit enqueue ${shQuote(dir)} …`,
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

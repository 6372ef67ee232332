import { type MockBinary, type MockCall, openMockBinDir, UnusedResponsesError } from 'shimkit';
import { parseArgs, positionals } from './args.js';
import type { Command } from './command.js';
import { ExitCode } from './exit-codes.js';
import { commandModule } from './run.js';
import { firstPositional, isServerDir } from './server/dir.js';
import { serverForms } from './server/forms.js';
import { plural, shQuote } from './words.js';

/** The mocks a command names (all of the dir's when none is named). */
function mocksOf(dir: string, names: readonly string[]): MockBinary[] {
  const bin = openMockBinDir(dir);
  return names.length > 0 ? names.map((name) => bin.get(name)) : bin.mocks();
}

/** `shimkit calls D [NAME…]`: what the mocks recorded. */
export const callsCommand: Command = {
  name: 'calls',
  usage: 'shimkit calls D [NAME...] [--json]',
  help: `Print the calls recorded by the mocks in D (all of them, or the NAMEs given), mock
by mock (sorted by name; the NAMEs in the order given), each mock's calls in the order
they started, one line each:
  #1 git status --short -> exit 0 (response #1)

Options:
  --json   print a JSON array instead, one object per call: {"mock","index","argv",
           "argvBase64" (only when an argument is not UTF-8),"cwd","pid","ppid","startedAt",
           "endedAt","status","exitCode","signal","response","responseSource","env",
           "stdin"/"stdinBase64","diagnostic"}

Examples:
  shimkit calls "$D"
  shimkit calls "$D" git --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["argv"])'`,
  run(argv) {
    const args = parseArgs('calls', argv, { json: { kind: 'switch' } });
    const [dir, ...names] = positionals('calls', args, ['D'], [], true) as [string, ...string[]];
    const calls = mocksOf(dir, names).flatMap((mock) =>
      mock.calls().map((call) => ({ mock: mock.name, call })),
    );
    if (args.switches.has('json')) {
      process.stdout.write(
        `${JSON.stringify(calls.map(({ mock, call }) => toJson(mock, call)))}\n`,
      );
      return ExitCode.ok;
    }
    for (const { mock, call } of calls) process.stdout.write(`${describe(mock, call)}\n`);
    return ExitCode.ok;
  },
};

function describe(mock: string, call: MockCall): string {
  const argv = [mock, ...call.argv].map(shQuote).join(' ');
  const ending =
    call.status === 'running'
      ? 'still running'
      : call.signal
        ? `killed by ${call.signal}`
        : call.exitCode === undefined
          ? call.status // killed mid-way, or timed out: no exit code of its own
          : `exit ${call.exitCode}`;
  const source =
    call.responseSource === 'queue' || call.responseSource === 'repeat'
      ? `response #${call.response}${call.responseSource === 'repeat' ? ', repeated' : ''}`
      : (call.responseSource ?? call.status);
  return `#${call.index} ${argv} -> ${ending} (${source})`;
}

function toJson(mock: string, call: MockCall): Record<string, unknown> {
  const bytes = call.argvBytes;
  const exact = bytes.every((b, i) => Buffer.from(call.argv[i] ?? '').equals(b));
  const stdin = call.stdinBytes;
  return {
    mock,
    index: call.index,
    argv: call.argv,
    ...(exact ? {} : { argvBase64: bytes.map((b) => b.toString('base64')) }),
    cwd: call.cwd,
    pid: call.pid,
    ppid: call.ppid,
    startedAt: call.startedAt,
    // Keys that have no value yet are null, not left out, so `c["exitCode"]` always works.
    endedAt: call.endedAt ?? null,
    status: call.status,
    exitCode: call.exitCode ?? null,
    signal: call.signal ?? null,
    response: call.response ?? null,
    responseSource: call.responseSource ?? null,
    env: call.env ?? null,
    ...(stdin === undefined
      ? {}
      : Buffer.from(stdin.toString('utf8')).equals(stdin)
        ? { stdin: stdin.toString('utf8') }
        : { stdinBase64: stdin.toString('base64') }),
    diagnostic: call.diagnostic ?? null,
  };
}

/** `shimkit verify D [NAME…]`: every response used, every call answered. */
export const verifyCommand: Command = {
  name: 'verify',
  usage: 'shimkit verify D [NAME...] [--json]',
  help: `Check the mocks in D (all of them, or the NAMEs given): every queued response was
used (as often as its --times asks, unless --optional), and no call went unanswered (a
call the mock's default response answered counts as answered).
Prints one line per mock that is done; otherwise the report of what was never used and
the recorded calls goes to stderr, and the exit code is 1.

Options:
  --json   print {"ok":true|false,"mocks":[{"name","ok","calls","report"}]} on stdout instead
           ("report" is null when the mock is done)

With D a mock server's dir (shimkit serve), verify checks the server's scripted responses
instead: see \`shimkit verify D --help\` there.

Examples:
  shimkit verify "$D"
  shimkit verify "$D" git || exit 1`,
  async run(argv) {
    // A mock server's dir (shimkit serve): its own report.
    if (isServerDir(firstPositional(argv, {}))) return (await serverForms()).exec('verify', argv);
    const args = parseArgs('verify', argv, { json: { kind: 'switch' } });
    const [dir, ...names] = positionals('verify', args, ['D'], [], true) as [string, ...string[]];
    const results = mocksOf(dir, names).map((mock) => {
      try {
        mock.assertDone();
        return { name: mock.name, ok: true, calls: mock.callCount(), report: null };
      } catch (error) {
        if (!(error instanceof UnusedResponsesError)) throw error;
        return { name: mock.name, ok: false, calls: mock.callCount(), report: error.message };
      }
    });
    const ok = results.every((r) => r.ok);
    if (args.switches.has('json')) {
      process.stdout.write(`${JSON.stringify({ ok, mocks: results })}\n`);
    } else {
      for (const r of results) {
        if (r.ok)
          process.stdout.write(
            `ok: mock "${r.name}", ${plural(r.calls, 'call')}, every response used\n`,
          );
        else process.stderr.write(`${r.report}\n`);
      }
      if (results.length === 0) process.stdout.write(`ok: ${dir} has no mocks\n`);
    }
    return ok ? ExitCode.ok : ExitCode.failed;
  },
};

export const { exec, help } = commandModule(callsCommand, verifyCommand);

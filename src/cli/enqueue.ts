import { InvalidResponseError, type MockResponse, openMockBinDir } from 'shimkit';
import { milliseconds, type Parsed, parseArgs, positionals } from './args.js';
import type { Command } from './command.js';
import { ExitCode, UsageError } from './exit-codes.js';
import { jsonFlagSource } from './json-flag.js';
import { commandModule } from './run.js';
import { firstPositional, isServerDir } from './server/dir.js';
import { SERVER_ENQUEUE_FLAGS } from './server/flags.js';
import { serverForms } from './server/forms.js';

const FLAGS = {
  stdout: { kind: 'value', value: 'TEXT' },
  stderr: { kind: 'value', value: 'TEXT' },
  'stdout-base64': { kind: 'value', value: 'B64' },
  'stderr-base64': { kind: 'value', value: 'B64' },
  exit: { kind: 'value', value: 'N' },
  delay: { kind: 'value', value: 'DURATION' },
  'match-args': { kind: 'value', value: 'ARGS' },
  'match-prefix': { kind: 'value', value: 'ARGS' },
  times: { kind: 'value', value: 'N|always' },
  optional: { kind: 'switch' },
  signal: { kind: 'value', value: 'NAME' },
  hang: { kind: 'switch' },
  jsonl: { kind: 'list', value: 'JSON' },
  json: { kind: 'value', value: 'JSON' },
} as const;

/** `shimkit enqueue D NAME …`: queue one scripted response (or several, from JSON). */
export const enqueueCommand: Command = {
  name: 'enqueue',
  usage:
    'shimkit enqueue D NAME [--stdout TEXT] [--stderr TEXT] [--exit N] [--delay 200ms] [--json JSON] ...',
  help: `Queue a response for mock NAME in dir D: the next call not yet answered gets it.
Each call claims one response, exactly once, in queue order (or the first whose
--match-args fits). Flags build one response; --json gives a whole response object
(every field of MockResponse), or an array of them; flags add to it.

Options:
  --stdout TEXT           write TEXT to stdout (as given: add the newline yourself)
  --stderr TEXT           write TEXT to stderr
  --stdout-base64 B64     write these bytes to stdout (for non-UTF-8 output)
  --stderr-base64 B64     write these bytes to stderr
  --exit N                exit code, 0-255 (default 0)
  --delay DURATION        wait first: 200, 200ms or 1.5s
  --match-args ARGS       only for a call with exactly these arguments: words split at spaces,
                          or a JSON array ('["commit","-m","a b"]')
  --match-prefix ARGS     only for a call whose arguments start with these (as --match-args)
  --times N|always        answer N calls (default 1), or every call that fits
  --optional              \`verify\` does not ask for this response to be used
  --signal NAME           end by this signal (SIGTERM, SIGKILL, ...) after the output
  --hang                  never exit (until killed, or the mock's timeout)
  --jsonl JSON            write this value as one JSON line to stdout (repeatable)
  --json JSON             the response as JSON (an object, or an array of objects);
                          "-" reads it from stdin, "@FILE" from a file

With D a mock server's dir (shimkit serve), enqueue takes HTTP response flags instead
(--sse-chat TEXT, --status N, --json RESPONSE, ...): see \`shimkit enqueue D --help\` there.

Examples:
  shimkit enqueue "$D" git --stdout $'main\\n'
  shimkit enqueue "$D" git --stderr 'fatal: rejected' --exit 1 --delay 200ms
  shimkit enqueue "$D" git --match-args 'push origin main' --exit 1
  shimkit enqueue "$D" git --json '{"stdout":"a\\nb\\n","writeFiles":{".git/HEAD":"ref: refs/heads/main\\n"}}'
  shimkit enqueue "$D" git --stdout-base64 "$(printf '\\377\\376' | base64 -w0)"`,
  async run(argv) {
    // A mock server's dir (shimkit serve) takes response flags of its own.
    if (isServerDir(firstPositional(argv, { ...FLAGS, ...SERVER_ENQUEUE_FLAGS }))) {
      return (await serverForms()).exec('enqueue', argv);
    }
    const args = parseArgs('enqueue', argv, FLAGS);
    const [dir, name] = positionals('enqueue', args, ['D', 'NAME']) as [string, string];
    const responses = buildResponses(args);
    // The mock is found before anything is queued: a wrong dir or name says so.
    const mock = openMockBinDir(dir).get(name);
    mock.enqueue(responses);
    return ExitCode.ok;
  },
};

function buildResponses(args: Parsed): MockResponse[] {
  const json = args.values.get('json');
  const base = json === undefined ? [{}] : parseJson(json);
  const flags = responseFlags(args);
  if (base.length !== 1 && Object.keys(flags).length > 0) {
    throw new UsageError(
      'enqueue',
      'flags add to one response: with --json giving an array, put every field in the JSON.',
    );
  }
  return base.map((response) => {
    for (const key of Object.keys(flags)) {
      if (Object.hasOwn(response, key)) {
        throw new UsageError(
          'enqueue',
          `${JSON.stringify(key)} is given both in --json and by a flag: keep one.`,
        );
      }
    }
    return { ...response, ...flags };
  });
}

/**
 * A text flag, as Node decoded the argument: bytes that are not UTF-8 came in
 * as U+FFFD, and would be served as such. Refused, pointing to the base64 form.
 */
function utf8(flag: string, value: string): string {
  if (value.includes('\uFFFD')) {
    throw new UsageError(
      'enqueue',
      `${flag} holds bytes that are not UTF-8 (they would be served as U+FFFD). Pass them with ${flag}-base64 "$(printf '…' | base64 -w0)" instead.`,
    );
  }
  return value;
}

function responseFlags(args: Parsed): MockResponse {
  const r: MockResponse = {};
  const { values, lists, switches } = args;
  const text = (flag: string) => values.get(flag);
  if (text('stdout') !== undefined) r.stdout = utf8('--stdout', text('stdout') as string);
  if (text('stderr') !== undefined) r.stderr = utf8('--stderr', text('stderr') as string);
  if (text('stdout-base64') !== undefined)
    r.stdoutBase64 = base64('--stdout-base64', text('stdout-base64') as string);
  if (text('stderr-base64') !== undefined)
    r.stderrBase64 = base64('--stderr-base64', text('stderr-base64') as string);
  const exit = text('exit');
  if (exit !== undefined) {
    if (!/^\d{1,3}$/.test(exit) || Number(exit) > 255) {
      throw new UsageError(
        'enqueue',
        `--exit takes an exit code from 0 to 255, got ${JSON.stringify(exit)}.`,
      );
    }
    r.exitCode = Number(exit);
  }
  const delay = text('delay');
  if (delay !== undefined) r.delayMs = milliseconds('enqueue', '--delay', delay);
  const exact = text('match-args');
  const prefix = text('match-prefix');
  if (exact !== undefined || prefix !== undefined) {
    r.match = {};
    if (exact !== undefined) r.match.args = argList('--match-args', exact);
    if (prefix !== undefined) r.match.argsPrefix = argList('--match-prefix', prefix);
  }
  const times = text('times');
  if (times !== undefined) {
    if (times !== 'always' && !/^[1-9]\d*$/.test(times)) {
      throw new UsageError(
        'enqueue',
        `--times takes a count >= 1 or "always", got ${JSON.stringify(times)}.`,
      );
    }
    r.times = times === 'always' ? 'always' : Number(times);
  }
  if (switches.has('optional')) r.optional = true;
  if (switches.has('hang')) r.hang = true;
  if (text('signal') !== undefined) {
    const signal = (text('signal') as string).toUpperCase();
    r.signal = (signal.startsWith('SIG') ? signal : `SIG${signal}`) as MockResponse['signal'];
  }
  const jsonl = lists.get('jsonl');
  if (jsonl) r.jsonl = jsonl.map((line) => parseValue('--jsonl', line));
  return r;
}

/** `--json`: an object or an array of objects; `-` is stdin, `@FILE` a file. */
function parseJson(text: string): MockResponse[] {
  const source = jsonFlagSource('enqueue', '--json', text);
  const value = parseValue('--json', source);
  const list = Array.isArray(value) ? value : [value];
  list.forEach((item, i) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      throw new InvalidResponseError(
        `Expected --json to be a response object such as {"stdout":"main\\n"} (or an array of them), got ${JSON.stringify(item)}${Array.isArray(value) ? ` at [${i}]` : ''}.`,
      );
    }
  });
  return list as MockResponse[];
}

function parseValue(flag: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      'enqueue',
      `${flag} is not valid JSON (${(error as Error).message}): ${text.length > 60 ? `${text.slice(0, 59)}…` : text}. In a shell, put it in single quotes: ${flag} '{"stdout":"main\\n"}'.`,
    );
  }
}

function base64(flag: string, text: string): string {
  const clean = text.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) || clean.length % 4 === 1) {
    throw new UsageError(
      'enqueue',
      `${flag} takes base64 (as \`base64\` prints it), got ${JSON.stringify(text.slice(0, 40))}.`,
    );
  }
  return clean;
}

/** `'push origin main'` or `'["commit","-m","a b"]'`. */
function argList(flag: string, text: string): string[] {
  if (text.trimStart().startsWith('[')) {
    const value = parseValue(flag, text);
    if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
      throw new UsageError('enqueue', `${flag} as JSON must be an array of strings, got ${text}.`);
    }
    return value;
  }
  return text.split(/\s+/).filter((word) => word !== '');
}

export const { exec, help } = commandModule(enqueueCommand);

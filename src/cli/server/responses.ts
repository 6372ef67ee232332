import { type MockServerResponse, reply, sse } from 'shimkit';
import { milliseconds, type Parsed } from '../args.js';
import { UsageError } from '../exit-codes.js';
import { jsonFlagSource } from '../json-flag.js';
import { nearestWord } from '../words.js';

export const RESPONSE_FLAGS_HELP = `Response (one of):
  --sse-chat TEXT        an OpenAI chat-completions stream of TEXT (sse.chat); repeat the flag
                         for one delta each: --sse-chat Hel --sse-chat lo
  --sse-responses TEXT   an OpenAI Responses API stream (sse.responses), repeatable as above
  --sse-messages TEXT    an Anthropic Messages stream (sse.messages), repeatable as above
  --status N             an error status with a JSON error body both SDKs read (reply.status)
    --retry-after-ms MS    with it a retry-after-ms header (and retry-after, rounded up)
    --retry-after S        with it a retry-after header, in seconds
  --json RESPONSE        a whole MockServerResponse as JSON ('{"status":200,"json":{"id":1}}');
                         "-" reads it from stdin, "@FILE" from a file
Added to it:
  --delay MS             wait before the status line (200, 200ms or 1.5s)
  --event-delay MS       wait before each SSE event after the first
  --cut-after-events N   end the stream after N events (0: right after the headers) ...
  --cut fin|rst|stall    ... by a FIN without the last chunk (default), a reset, or a stall`;

const KINDS = ['sse-chat', 'sse-responses', 'sse-messages', 'status', 'json'] as const;
const CUTS = ['fin', 'rst', 'stall'] as const;

export function buildServerResponse(command: string, args: Parsed): MockServerResponse {
  const given = KINDS.filter((k) => args.values.has(k) || args.lists.has(k));
  if (given.length !== 1) {
    const all =
      '--sse-chat TEXT, --sse-responses TEXT, --sse-messages TEXT, --status N or --json RESPONSE';
    throw new UsageError(
      command,
      given.length === 0
        ? `which response? Give one of ${all}.`
        : `give one response kind, not ${given.map((k) => `--${k}`).join(' and ')}: one of ${all}.`,
    );
  }
  const kind = given[0] as (typeof KINDS)[number];
  for (const flag of ['retry-after-ms', 'retry-after']) {
    if (args.values.has(flag) && kind !== 'status') {
      throw new UsageError(
        command,
        `--${flag} goes with --status N (e.g. --status 429 --${flag} 1).`,
      );
    }
  }
  const base = baseResponse(command, kind, args);
  const added: MockServerResponse = {};
  const delay = args.values.get('delay');
  if (delay !== undefined) added.delayMs = milliseconds(command, '--delay', delay);
  const eventDelay = args.values.get('event-delay');
  if (eventDelay !== undefined)
    added.eventDelayMs = milliseconds(command, '--event-delay', eventDelay);
  const after = args.values.get('cut-after-events');
  const how = args.values.get('cut');
  if (how !== undefined && after === undefined) {
    throw new UsageError(
      command,
      `--cut goes with --cut-after-events N (e.g. --cut-after-events 3 --cut ${how}).`,
    );
  }
  if (after !== undefined) {
    if (!/^\d+$/.test(after)) {
      throw new UsageError(
        command,
        `--cut-after-events takes a count of events (0 or more), got ${JSON.stringify(after)}.`,
      );
    }
    if (how !== undefined && !(CUTS as readonly string[]).includes(how)) {
      const guess = nearestWord(how, CUTS);
      throw new UsageError(
        command,
        `--cut takes fin, rst or stall, got ${JSON.stringify(how)}.${guess ? ` Did you mean ${guess}?` : ''}`,
      );
    }
    added.cut = { afterEvents: Number(after), how: (how ?? 'fin') as (typeof CUTS)[number] };
  }
  if (kind === 'json') {
    for (const key of Object.keys(added)) {
      if (Object.hasOwn(base, key)) {
        throw new UsageError(
          command,
          `${JSON.stringify(key)} is given both in --json and by a flag: keep one.`,
        );
      }
    }
  }
  return { ...base, ...added };
}

function baseResponse(
  command: string,
  kind: (typeof KINDS)[number],
  args: Parsed,
): MockServerResponse {
  if (kind === 'json') {
    const value = readJsonFlag(command, '--json', args.values.get('json') as string);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new UsageError(
        command,
        `--json takes one response object such as '{"status":200,"json":{"ok":true}}', got ${JSON.stringify(value)}.`,
      );
    }
    return value as MockServerResponse;
  }
  if (kind === 'status') {
    const text = args.values.get('status') as string;
    if (!/^\d{3}$/.test(text) || Number(text) < 100 || Number(text) > 599) {
      throw new UsageError(
        command,
        `--status takes an HTTP status from 100 to 599, got ${JSON.stringify(text)}.`,
      );
    }
    const options: { retryAfterMs?: number; retryAfter?: number } = {};
    const ms = args.values.get('retry-after-ms');
    if (ms !== undefined) options.retryAfterMs = milliseconds(command, '--retry-after-ms', ms);
    const seconds = args.values.get('retry-after');
    if (seconds !== undefined) {
      if (!/^\d+$/.test(seconds)) {
        throw new UsageError(
          command,
          `--retry-after takes whole seconds, got ${JSON.stringify(seconds)}.`,
        );
      }
      options.retryAfter = Number(seconds);
    }
    return reply.status(Number(text), options);
  }
  const texts = args.lists.get(kind) as string[];
  const text = texts.length === 1 ? (texts[0] as string) : texts;
  if (kind === 'sse-chat') return sse.chat(text);
  if (kind === 'sse-responses') return sse.responses(text);
  return sse.messages(text);
}

/** A JSON flag's value: the text, `-` for stdin, `@FILE` for a file. */
export function readJsonFlag(command: string, flag: string, text: string): unknown {
  const source = jsonFlagSource(command, flag, text);
  try {
    return JSON.parse(source);
  } catch (error) {
    throw new UsageError(
      command,
      `${flag} is not valid JSON (${(error as Error).message}): ${source.length > 60 ? `${source.slice(0, 59)}…` : source}. In a shell, put it in single quotes: ${flag} '{"model":"gpt"}'.`,
    );
  }
}

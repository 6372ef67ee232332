import { optionError } from '../../internal/options.js';
import type { MockServerResponse, SseEvent } from '../types.js';
import {
  CHAT_ID,
  callId,
  SHIMKIT_CREATED,
  SHIMKIT_INPUT_TOKENS,
  SHIMKIT_MODEL,
  SYSTEM_FINGERPRINT,
} from './ids.js';
import {
  booleanOption,
  builderOptions,
  countOption,
  deltas,
  deltasOption,
  jsonPieces,
  listOption,
  nullableString,
  objectOption,
  type ResponseOptions,
  sseResponse,
  stringOption,
  usageOption,
} from './options.js';

// OpenAI Chat Completions streaming (`POST /v1/chat/completions`, stream: true):
// chat.completion.chunk objects, no `event:` lines, ending in `data: [DONE]`.
// Byte for byte as docs/design/sse-wire-formats.md §1.

/** One tool call streamed by {@link chat}. */
export interface ChatToolCall {
  /** The function's name. */
  name: string;
  /**
   * The arguments: a string is one delta, an array one delta each (pieces of
   * one JSON text), an object its JSON in one delta.
   * @default '{}'
   */
  arguments?: string | string[] | Record<string, unknown>;
  /** @default 'call_shimkit_<n>' (1-based, in order) */
  id?: string;
}

/** The mid-stream error chunk of {@link chat}: `data: {"error":{…}}`, which the SDK throws as `APIError`. */
export interface ChatStreamError {
  /** @default 'shimkit: scripted stream error' */
  message?: string;
  /** @default 'server_error' */
  type?: string;
  /** @default null */
  param?: string | null;
  /** @default null */
  code?: string | null;
}

/** Token counts of the usage chunk; other keys (`completion_tokens_details` …) are sent as given. */
export interface ChatUsage {
  /** @default 9 */
  prompt_tokens?: number;
  /** @default the number of deltas (text, reasoning and argument pieces) */
  completion_tokens?: number;
  /** @default prompt_tokens + completion_tokens */
  total_tokens?: number;
  [key: string]: unknown;
}

/** Options of {@link chat}; the response fields ({@link ResponseOptions}) pass through. */
export interface ChatStreamOptions extends ResponseOptions {
  /** @default 'shimkit-model' */
  model?: string;
  /** @default 'chatcmpl-shimkit-1' */
  id?: string;
  /** Unix seconds. @default 1700000000 */
  created?: number;
  /** `null` sends `"system_fingerprint":null`. @default 'fp_shimkit' */
  systemFingerprint?: string | null;
  /** Tool calls after the text, `index` 0, 1, … */
  toolCalls?: ChatToolCall[];
  /** `stop`, `length`, `tool_calls`, `content_filter` … @default 'tool_calls' with toolCalls, else 'stop' */
  finishReason?: string;
  /**
   * As for a request with `stream_options: { include_usage: true }`: every
   * chunk has `"usage":null`, and a usage chunk with `"choices":[]` comes before `[DONE]`.
   * @default true when `usage` is given, else false
   */
  includeUsage?: boolean;
  /** The usage chunk's counts (see {@link ChatUsage}). */
  usage?: ChatUsage;
  /** Reasoning deltas before the text (an OpenAI-compatible vendor extension). */
  reasoning?: string | string[];
  /** The delta key reasoning goes in (OpenRouter: `'reasoning'`). @default 'reasoning_content' */
  reasoningField?: string;
  /** End with this error chunk after the deltas, instead of the finish chunk and `[DONE]`. */
  error?: ChatStreamError;
}

const OWN_KEYS = [
  'model',
  'id',
  'created',
  'systemFingerprint',
  'toolCalls',
  'finishReason',
  'includeUsage',
  'usage',
  'reasoning',
  'reasoningField',
  'error',
];
const WHERE = 'sse.chat()';

/**
 * An OpenAI Chat Completions stream: a role chunk, one chunk per text delta
 * (and reasoning and tool-call deltas), a chunk with `finish_reason`, the
 * usage chunk when asked, `data: [DONE]`. Deterministic ids, `created` and
 * model, all overridable. Returns response data; give it to `enqueue()` or
 * `expect()`.
 *
 * @example
 * api.enqueue(sse.chat(['Hel', 'lo'], { includeUsage: true, usage: { prompt_tokens: 9 } }));
 * api.enqueue(sse.chat([], { toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] }));
 * api.enqueue(sse.chat('Hel', { error: { message: 'overloaded' } }));
 */
export function chat(text: string | string[], options?: ChatStreamOptions): MockServerResponse {
  const o = builderOptions(options, OWN_KEYS, WHERE);
  return sseResponse(chatEvents(text, o), o, WHERE);
}

/** @internal The events of {@link chat}, its own options checked (the response fields are not its business): the playbook engine encodes them itself. */
export function chatEvents(text: string | string[], o: Partial<ChatStreamOptions>): SseEvent[] {
  const texts = deltas(text, WHERE);
  const reasoning = deltasOption(o.reasoning, WHERE, 'reasoning');
  const reasoningField = stringOption(
    o.reasoningField,
    WHERE,
    'reasoningField',
    'reasoning_content',
  );
  const calls = listOption(
    o.toolCalls,
    WHERE,
    'toolCalls',
    'an array of { name, arguments?, id? }',
  ).map((call, i) => {
    const c = objectOption(call, WHERE, `toolCalls[${i}]`, ['name', 'arguments', 'id']) ?? {};
    if (typeof c.name !== 'string')
      throw optionError(WHERE, `toolCalls[${i}].name`, 'a string', c.name);
    return {
      name: c.name,
      id: stringOption(c.id, WHERE, `toolCalls[${i}].id`, callId(i + 1)),
      pieces: jsonPieces(c.arguments, WHERE, `toolCalls[${i}].arguments`, ['{}']),
    };
  });
  const finishReason = stringOption(
    o.finishReason,
    WHERE,
    'finishReason',
    calls.length > 0 ? 'tool_calls' : 'stop',
  );
  const includeUsage = booleanOption(o.includeUsage, WHERE, 'includeUsage', o.usage !== undefined);
  const pieceCount =
    texts.length + reasoning.length + calls.reduce((n, c) => n + c.pieces.length, 0);
  const usage = usageOption(
    o.usage,
    WHERE,
    { prompt_tokens: SHIMKIT_INPUT_TOKENS, completion_tokens: pieceCount, total_tokens: 0 },
    ['total_tokens', 'prompt_tokens', 'completion_tokens'],
  );
  const error = objectOption(o.error, WHERE, 'error', ['message', 'type', 'param', 'code']);
  const head = {
    id: stringOption(o.id, WHERE, 'id', CHAT_ID),
    object: 'chat.completion.chunk',
    created: countOption(o.created, WHERE, 'created', SHIMKIT_CREATED),
    model: stringOption(o.model, WHERE, 'model', SHIMKIT_MODEL),
    system_fingerprint: nullableString(
      o.systemFingerprint,
      WHERE,
      'systemFingerprint',
      SYSTEM_FINGERPRINT,
    ),
  };
  const chunk = (delta: object, finish: string | null = null): SseEvent => ({
    data: {
      ...head,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(includeUsage ? { usage: null } : {}),
    },
  });
  const header = (call: (typeof calls)[number], index: number) => ({
    index,
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: '' },
  });

  const events: SseEvent[] = [];
  const [first] = calls;
  // As recorded: a call that comes first shares the role chunk.
  const merged = first !== undefined && texts.length === 0 && reasoning.length === 0;
  events.push(
    chunk(
      merged
        ? { role: 'assistant', content: null, tool_calls: [header(first, 0)], refusal: null }
        : { role: 'assistant', content: '', refusal: null },
    ),
  );
  for (const piece of reasoning) events.push(chunk({ [reasoningField]: piece }));
  for (const piece of texts) events.push(chunk({ content: piece }));
  for (const [index, call] of calls.entries()) {
    if (!(merged && index === 0)) events.push(chunk({ tool_calls: [header(call, index)] }));
    for (const piece of call.pieces) {
      events.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  }
  if (error !== undefined) {
    const body = {
      message: stringOption(
        error.message,
        WHERE,
        'error.message',
        'shimkit: scripted stream error',
      ),
      type: stringOption(error.type, WHERE, 'error.type', 'server_error'),
      param: nullableString(error.param, WHERE, 'error.param', null),
      code: nullableString(error.code, WHERE, 'error.code', null),
    };
    events.push({ data: { error: body } });
  } else {
    events.push(chunk({}, finishReason));
    if (includeUsage) events.push({ data: { ...head, choices: [], usage } });
    events.push({ data: '[DONE]' });
  }
  return events;
}

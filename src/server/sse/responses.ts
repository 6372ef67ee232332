import { InvalidOptionError } from '../../internal/errors.js';
import { optionError } from '../../internal/options.js';
import type { MockServerResponse, SseEvent } from '../types.js';
import {
  callId,
  functionItemId,
  MESSAGE_ITEM_ID,
  REASONING_ITEM_ID,
  RESPONSE_ID,
  SHIMKIT_CREATED,
  SHIMKIT_INPUT_TOKENS,
  SHIMKIT_MODEL,
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
import { type OutputItem, reasoningItem, streamItems } from './responses-items.js';

// OpenAI Responses API streaming (`POST /v1/responses`, stream: true): typed
// events (`event: <type>`) with `sequence_number` from 0, ending in
// `response.completed` (or an error), no `[DONE]`. Byte for byte as
// docs/design/sse-wire-formats.md §2.

/** One function call streamed by {@link responses}. */
export interface ResponsesFunctionCall {
  /** The function's name. */
  name: string;
  /**
   * The arguments: a string is one delta, an array one delta each, an object its JSON.
   * @default '{}'
   */
  arguments?: string | string[] | Record<string, unknown>;
  /** @default 'call_shimkit_<n>' (1-based) */
  callId?: string;
  /** The item's id. @default 'fc_shimkit_<n>' */
  id?: string;
}

/** Token counts of `response.completed`; other keys are sent as given. */
export interface ResponsesUsage {
  /** @default 9 */
  input_tokens?: number;
  /** @default the number of deltas (text, reasoning and argument pieces) */
  output_tokens?: number;
  /** @default input_tokens + output_tokens */
  total_tokens?: number;
  /** @default { cached_tokens: 0 } */
  input_tokens_details?: Record<string, unknown>;
  /** @default { reasoning_tokens: 0 } */
  output_tokens_details?: Record<string, unknown>;
  [key: string]: unknown;
}

/** Options of {@link responses}; the response fields ({@link ResponseOptions}) pass through. */
export interface ResponsesStreamOptions extends ResponseOptions {
  /** @default 'shimkit-model' */
  model?: string;
  /** The response's id. @default 'resp_shimkit_1' */
  id?: string;
  /** Unix seconds. @default 1700000000 */
  createdAt?: number;
  /** The message item's id. @default 'msg_shimkit_1' */
  messageId?: string;
  /** A reasoning item with summary deltas (`response.reasoning_summary_text.delta`), first. */
  reasoning?: string | string[];
  /** A reasoning item with reasoning-text deltas (`response.reasoning_text.delta`, open-weight models) instead. */
  reasoningText?: string | string[];
  /** The reasoning item's id. @default 'rs_shimkit_1' */
  reasoningId?: string;
  /** Function call items after the message. */
  functionCalls?: ResponsesFunctionCall[];
  /** The counts in `response.completed` (see {@link ResponsesUsage}). */
  usage?: ResponsesUsage;
  /** Send `response.in_progress` after `response.created`. @default true */
  inProgress?: boolean;
  /** After the last item's deltas, an `error` event (the SDK yields it; the stream ends there). */
  error?: { code?: string; message?: string; param?: string | null };
  /** After the last item's deltas (and `error`), `response.failed` with this `response.error`. */
  failed?: { code?: string; message?: string };
}

const OWN_KEYS = [
  'model',
  'id',
  'createdAt',
  'messageId',
  'reasoning',
  'reasoningText',
  'reasoningId',
  'functionCalls',
  'usage',
  'inProgress',
  'error',
  'failed',
];
const WHERE = 'sse.responses()';

/**
 * An OpenAI Responses API stream: `response.created`, `response.in_progress`,
 * then each output item (reasoning, the message, function calls) as added /
 * delta / done events, then `response.completed` listing them with usage.
 * With `error` or `failed` the stream ends after the last item's deltas
 * instead. Returns response data for `enqueue()` or `expect()`.
 *
 * @example
 * api.enqueue(sse.responses(['Hel', 'lo']));
 * api.enqueue(sse.responses([], { functionCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] }));
 */
export function responses(
  text: string | string[],
  options?: ResponsesStreamOptions,
): MockServerResponse {
  const o = builderOptions(options, OWN_KEYS, WHERE);
  return sseResponse(responsesEvents(text, o), o, WHERE);
}

/** @internal The events of {@link responses}, its own options checked (the response fields are not its business): the playbook engine encodes them itself. */
export function responsesEvents(
  text: string | string[],
  o: Partial<ResponsesStreamOptions>,
): SseEvent[] {
  const texts = deltas(text, WHERE);
  if (o.reasoning !== undefined && o.reasoningText !== undefined) {
    throw new InvalidOptionError(
      `${WHERE} got both \`reasoning\` (summary deltas) and \`reasoningText\` (reasoning-text deltas); give one.`,
    );
  }
  const items: OutputItem[] = [];
  const summary = deltasOption(o.reasoning, WHERE, 'reasoning');
  const reasoningText = deltasOption(o.reasoningText, WHERE, 'reasoningText');
  const reasoningId = stringOption(o.reasoningId, WHERE, 'reasoningId', REASONING_ITEM_ID);
  if (o.reasoning !== undefined) items.push(reasoningItem(reasoningId, 'summary', summary));
  if (o.reasoningText !== undefined) items.push(reasoningItem(reasoningId, 'text', reasoningText));
  if (texts.length > 0) {
    items.push({
      kind: 'message',
      id: stringOption(o.messageId, WHERE, 'messageId', MESSAGE_ITEM_ID),
      pieces: texts,
    });
  }
  const calls = listOption(
    o.functionCalls,
    WHERE,
    'functionCalls',
    'an array of { name, arguments? }',
  );
  for (const [i, call] of calls.entries()) {
    const at = `functionCalls[${i}]`;
    const c = objectOption(call, WHERE, at, ['name', 'arguments', 'callId', 'id']) ?? {};
    if (typeof c.name !== 'string') throw optionError(WHERE, `${at}.name`, 'a string', c.name);
    items.push({
      kind: 'function_call',
      id: stringOption(c.id, WHERE, `${at}.id`, functionItemId(i + 1)),
      callId: stringOption(c.callId, WHERE, `${at}.callId`, callId(i + 1)),
      name: c.name,
      pieces: jsonPieces(c.arguments, WHERE, `${at}.arguments`, ['{}']),
    });
  }
  const outputTokens = items.reduce((n, item) => n + item.pieces.length, 0);
  const usage = usageOption(o.usage, WHERE, responsesUsage(outputTokens), [
    'total_tokens',
    'input_tokens',
    'output_tokens',
  ]);
  const error = objectOption(o.error, WHERE, 'error', ['code', 'message', 'param']);
  const failed = objectOption(o.failed, WHERE, 'failed', ['code', 'message']);
  const model = stringOption(o.model, WHERE, 'model', SHIMKIT_MODEL);
  const createdAt = countOption(o.createdAt, WHERE, 'createdAt', SHIMKIT_CREATED);
  const id = stringOption(o.id, WHERE, 'id', RESPONSE_ID);
  const head: ResponseHead = { id, createdAt, model };
  const response = (status: string, output: object[], use: unknown, err: unknown = null) =>
    responseObject(head, status, output, use, err);

  const events: SseEvent[] = [];
  let seq = 0;
  const emit = (type: string, body: object) => {
    events.push({ event: type, data: { type, sequence_number: seq++, ...body } });
  };
  emit('response.created', { response: response('in_progress', [], null) });
  if (booleanOption(o.inProgress, WHERE, 'inProgress', true)) {
    emit('response.in_progress', { response: response('in_progress', [], null) });
  }
  const broken = error !== undefined || failed !== undefined;
  const done = streamItems(items, emit, broken);
  if (error !== undefined) {
    // As the API sends it: sequence_number last.
    events.push({
      event: 'error',
      data: {
        type: 'error',
        code: stringOption(error.code, WHERE, 'error.code', 'server_error'),
        message: stringOption(
          error.message,
          WHERE,
          'error.message',
          'shimkit: scripted stream error',
        ),
        param: nullableString(error.param, WHERE, 'error.param', null),
        sequence_number: seq++,
      },
    });
  }
  if (failed !== undefined) {
    const err = {
      code: stringOption(failed.code, WHERE, 'failed.code', 'server_error'),
      message: stringOption(failed.message, WHERE, 'failed.message', 'shimkit: scripted failure'),
    };
    emit('response.failed', { response: response('failed', done, null, err) });
  }
  if (!broken) emit('response.completed', { response: response('completed', done, usage) });
  return events;
}

/** The fields of a `response` object that stay the same from `response.created` to the end. */
export interface ResponseHead {
  id: string;
  /** Unix seconds. */
  createdAt: number;
  model: string;
}

/**
 * A Responses API `response` object (openai 6.49.0 `Response`), as the API
 * sends it in `response.created` … `response.completed`, and as the whole
 * body of a request without `stream` (status `completed`, with usage).
 */
export function responseObject(
  head: ResponseHead,
  status: string,
  output: object[],
  usage: unknown,
  error: unknown = null,
): Record<string, unknown> {
  return {
    id: head.id,
    object: 'response',
    created_at: head.createdAt,
    status,
    background: false,
    error,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model: head.model,
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    usage,
    user: null,
    metadata: {},
  };
}

/** The default usage of a response with `outputTokens` output tokens (input 9; total the sum). */
export function responsesUsage(outputTokens: number): Record<string, unknown> {
  return {
    input_tokens: SHIMKIT_INPUT_TOKENS,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: SHIMKIT_INPUT_TOKENS + outputTokens,
  };
}

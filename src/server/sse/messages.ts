import { optionError } from '../../internal/options.js';
import type { MockServerResponse, SseEvent } from '../types.js';
import {
  ANTHROPIC_MESSAGE_ID,
  SHIMKIT_INPUT_TOKENS,
  SHIMKIT_MODEL,
  THINKING_SIGNATURE,
  toolUseId,
} from './ids.js';
import {
  booleanOption,
  builderOptions,
  deltas,
  jsonPieces,
  listOption,
  nullableString,
  objectOption,
  type ResponseOptions,
  sseResponse,
  stringOption,
  usageOption,
} from './options.js';

// Anthropic Messages streaming (`POST /v1/messages`, stream: true):
// message_start, content blocks (start / delta / stop), `ping`,
// message_delta, message_stop; no `[DONE]`. Byte for byte as
// docs/design/sse-wire-formats.md §3.

/** One tool_use block streamed by {@link messages}. */
export interface MessagesToolUse {
  /** The tool's name. */
  name: string;
  /**
   * The input: a string is one `input_json_delta`, an array one each (pieces
   * of one JSON text), an object its JSON in one. An empty delta always comes
   * first, as recorded. @default no pieces (input `{}`)
   */
  input?: string | string[] | Record<string, unknown>;
  /** @default 'toolu_shimkit_<n>' (1-based) */
  id?: string;
}

/** A thinking block: its text deltas and the signature sent just before its stop. */
export interface MessagesThinking {
  text: string | string[];
  /** @default 'c2hpbWtpdA==' */
  signature?: string;
}

/** Token counts; other keys are sent in message_start's usage as given. */
export interface MessagesUsage {
  /** @default 9 */
  input_tokens?: number;
  /** message_delta's count (message_start says 1, as recorded). @default the number of deltas */
  output_tokens?: number;
  /** @default 0 (left out with legacyOrder) */
  cache_creation_input_tokens?: number;
  /** @default 0 (left out with legacyOrder) */
  cache_read_input_tokens?: number;
  [key: string]: unknown;
}

/** Options of {@link messages}; the response fields ({@link ResponseOptions}) pass through. */
export interface MessagesStreamOptions extends ResponseOptions {
  /** @default 'shimkit-model' */
  model?: string;
  /** @default 'msg_shimkit_1' */
  id?: string;
  /** A thinking block first: its text (a string or deltas), or `{ text, signature }`. */
  thinking?: string | string[] | MessagesThinking;
  /** tool_use blocks after the text. */
  toolUse?: MessagesToolUse[];
  /** @default 'tool_use' with toolUse, else 'end_turn' */
  stopReason?: string;
  /** @default null */
  stopSequence?: string | null;
  /** See {@link MessagesUsage}. */
  usage?: MessagesUsage;
  /** Send `event: ping` after the first block's start, as the API does. @default true */
  ping?: boolean;
  /** After the last block's deltas, `event: error` instead of the rest: the SDK throws `APIError` with this `error.type`. */
  error?: { type?: string; message?: string };
  /**
   * The 2024 recordings' shape: `content` before `model` in message_start,
   * no cache token counts (byte for byte the SDK's `basic_response.txt`).
   * @default false
   */
  legacyOrder?: boolean;
}

const OWN_KEYS = [
  'model',
  'id',
  'thinking',
  'toolUse',
  'stopReason',
  'stopSequence',
  'usage',
  'ping',
  'error',
  'legacyOrder',
];
const WHERE = 'sse.messages()';

type Block = { start: object; deltas: object[] };

/**
 * An Anthropic Messages stream: message_start, a thinking block (if asked),
 * the text block (unless `text` is `[]`), tool_use blocks, message_delta
 * with the stop reason and usage, message_stop. Returns response data for
 * `enqueue()` or `expect()`.
 *
 * @example
 * api.enqueue(sse.messages(['Hello', ' there']));
 * api.enqueue(sse.messages([], { toolUse: [{ name: 'get_weather', input: { city: 'Paris' } }] }));
 * api.enqueue(sse.messages('Hel', { error: { type: 'overloaded_error', message: 'Overloaded' } }));
 */
export function messages(
  text: string | string[],
  options?: MessagesStreamOptions,
): MockServerResponse {
  const o = builderOptions(options, OWN_KEYS, WHERE);
  return sseResponse(messagesEvents(text, o), o, WHERE);
}

/** @internal The events of {@link messages}, its own options checked (the response fields are not its business): the playbook engine encodes them itself. */
export function messagesEvents(
  text: string | string[],
  o: Partial<MessagesStreamOptions>,
): SseEvent[] {
  const blocks: Block[] = [];
  if (o.thinking !== undefined) {
    const t: Record<string, unknown> =
      typeof o.thinking === 'string' || Array.isArray(o.thinking)
        ? { text: o.thinking }
        : (objectOption(o.thinking, WHERE, 'thinking', ['text', 'signature']) ?? {});
    const signature = stringOption(t.signature, WHERE, 'thinking.signature', THINKING_SIGNATURE);
    blocks.push({
      start: { type: 'thinking', thinking: '', signature: '' },
      deltas: [
        ...deltas(t.text, WHERE, '`thinking.text` option').map((thinking) => ({
          type: 'thinking_delta',
          thinking,
        })),
        { type: 'signature_delta', signature },
      ],
    });
  }
  const texts = deltas(text, WHERE);
  if (texts.length > 0) {
    blocks.push({
      start: { type: 'text', text: '' },
      deltas: texts.map((t) => ({ type: 'text_delta', text: t })),
    });
  }
  const tools = listOption(o.toolUse, WHERE, 'toolUse', 'an array of { name, input?, id? }');
  for (const [i, tool] of tools.entries()) {
    const at = `toolUse[${i}]`;
    const t = objectOption(tool, WHERE, at, ['name', 'input', 'id']) ?? {};
    if (typeof t.name !== 'string') throw optionError(WHERE, `${at}.name`, 'a string', t.name);
    const id = stringOption(t.id, WHERE, `${at}.id`, toolUseId(i + 1));
    blocks.push({
      start: { type: 'tool_use', id, name: t.name, input: {} },
      deltas: ['', ...jsonPieces(t.input, WHERE, `${at}.input`, [])].map((partial_json) => ({
        type: 'input_json_delta',
        partial_json,
      })),
    });
  }
  const legacy = booleanOption(o.legacyOrder, WHERE, 'legacyOrder', false);
  // Counted as given: the leading empty input_json_delta of a tool is not a token.
  const deltaCount = blocks.reduce((n, b) => n + b.deltas.length, 0) - tools.length;
  const usage = usageOption(
    o.usage,
    WHERE,
    legacy
      ? { input_tokens: SHIMKIT_INPUT_TOKENS, output_tokens: deltaCount }
      : {
          input_tokens: SHIMKIT_INPUT_TOKENS,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          output_tokens: deltaCount,
        },
  );
  const { output_tokens: outputTokens, ...startUsage } = usage;
  const id = stringOption(o.id, WHERE, 'id', ANTHROPIC_MESSAGE_ID);
  const model = stringOption(o.model, WHERE, 'model', SHIMKIT_MODEL);
  const head = { id, type: 'message', role: 'assistant' };
  const tail = {
    stop_reason: null,
    stop_sequence: null,
    usage: { ...startUsage, output_tokens: 1 },
  };
  const message = legacy
    ? { ...head, content: [], model, ...tail }
    : { ...head, model, content: [], ...tail };
  const error = objectOption(o.error, WHERE, 'error', ['type', 'message']);
  const ping = booleanOption(o.ping, WHERE, 'ping', true);

  const events: SseEvent[] = [];
  const emit = (type: string, body: object = {}) =>
    events.push({ event: type, data: { type, ...body } });
  emit('message_start', { message });
  for (const [index, block] of blocks.entries()) {
    emit('content_block_start', { index, content_block: block.start });
    if (index === 0 && ping) events.push({ event: 'ping', data: '{"type": "ping"}' });
    for (const delta of block.deltas) emit('content_block_delta', { index, delta });
    if (error !== undefined && index === blocks.length - 1) break;
    emit('content_block_stop', { index });
  }
  if (blocks.length === 0 && ping) events.push({ event: 'ping', data: '{"type": "ping"}' });
  if (error !== undefined) {
    emit('error', {
      error: {
        type: stringOption(error.type, WHERE, 'error.type', 'overloaded_error'),
        message: stringOption(error.message, WHERE, 'error.message', 'Overloaded'),
      },
    });
    return events;
  }
  const stopReason = stringOption(
    o.stopReason,
    WHERE,
    'stopReason',
    tools.length > 0 ? 'tool_use' : 'end_turn',
  );
  emit('message_delta', {
    delta: {
      stop_reason: stopReason,
      stop_sequence: nullableString(o.stopSequence, WHERE, 'stopSequence', null),
    },
    usage: { output_tokens: outputTokens },
  });
  emit('message_stop');
  return events;
}

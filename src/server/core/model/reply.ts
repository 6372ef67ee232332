import { chatEvents } from '../../sse/chat.js';
import {
  SHIMKIT_CREATED,
  SHIMKIT_INPUT_TOKENS,
  SHIMKIT_MODEL,
  SYSTEM_FINGERPRINT,
} from '../../sse/ids.js';
import { messagesEvents } from '../../sse/messages.js';
import { responseObject, responsesEvents, responsesUsage } from '../../sse/responses.js';
import { finishedItem, type OutputItem } from '../../sse/responses-items.js';
import type { MockServerResponse, SseEvent, WireHttpResponse } from '../../types.js';
import type { ModelFormat } from './conversation.js';
import { codePointPieces, wordPieces } from './pieces.js';

// A playbook's answer to one model request (SPEC PB-01) in the endpoint's
// wire format: streamed with the sse builders when the request said
// `stream: true`, else the one JSON body the API sends. Ids come from the
// answer's key, so the same answer is the same bytes on every run.

/** Pieces each call's arguments are streamed in, at most. */
const ARGUMENT_PIECES = 3;
/** Deltas the text is streamed in, at most. */
const TEXT_DELTAS = 4;

/**
 * The id the answer gives its k-th tool call (k from 1): `call_shimkit_<key>_<k>`
 * in chat and Responses, `toolu_shimkit_<key>_<k>` in Anthropic Messages.
 * `key` names the step (`p1_s3`: playbook 1, step 3).
 */
export function toolCallId(format: ModelFormat, key: string, k: number): string {
  return `${format === 'messages' ? 'toolu' : 'call'}_shimkit_${key}_${k}`;
}

/** What the model answers to one request. */
export interface ModelAnswer {
  /**
   * Where the ids come from: chat completion `chatcmpl-shimkit-<key>`,
   * Responses response `resp_shimkit_<key>`, its message item
   * `msg_shimkit_<key>` and function call items `fc_shimkit_<key>_<k>`,
   * Anthropic message `msg_shimkit_<key>`; tool calls {@link toolCallId}.
   */
  key: string;
  /** The text of the answer (a `says`); absent when it is only tool calls. */
  text?: string;
  /** Tool calls, in order; `arguments` is the JSON text of the params (an object's JSON). */
  calls: Array<{ name: string; arguments: string }>;
}

/** What the answer takes from the request it answers. */
export interface ModelRequestFacts {
  /** The request's `model`. @default 'shimkit-model' */
  model?: string;
  /** chat: the request's `stream_options.include_usage` (a usage chunk ends the stream). */
  includeUsage?: boolean;
}

/**
 * The answer as response data in the format of the endpoint: an SSE stream
 * when `stream` (text in up to 4 deltas cut at words, each call's arguments
 * in up to 3 pieces, so clients must accumulate them), else one JSON body
 * (`chat.completion`, `response`, `message`). Deterministic: the same
 * arguments give the same bytes.
 */
export function modelReply(
  format: ModelFormat,
  stream: boolean,
  answer: ModelAnswer,
  request: ModelRequestFacts,
): MockServerResponse {
  return replyBody(format, stream, answer, request);
}

/**
 * {@link modelReply} as the serving thread writes it, encoded here without
 * the checks a scripted response gets (every value is the engine's own: its
 * JSON has no raw line breaks, and `JSON.stringify` escapes lone
 * surrogates): the same bytes as `toWireResponse(modelReply(…))`, for a
 * fraction of the work on the hot path of every model request.
 */
export function modelWire(
  format: ModelFormat,
  stream: boolean,
  answer: ModelAnswer,
  request: ModelRequestFacts,
): WireHttpResponse {
  const body = replyBody(format, stream, answer, request);
  const sse = 'sse' in body;
  const pieces = sse ? body.sse.map(eventBytes) : [utf8.encode(JSON.stringify(body.json))];
  return {
    status: 200,
    headers: sse ? SSE_HEADERS.map(([n, v]) => [n, v]) : [['content-type', 'application/json']],
    kind: sse ? 'sse' : 'body',
    pieces,
    gaps: pieces.map(() => 0),
    delayMs: 0,
    cut: undefined,
    resetBeforeHeaders: false,
    times: 1,
    optional: false,
    retryable: false,
  };
}

const utf8 = new TextEncoder();
const SSE_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['content-type', 'text/event-stream; charset=utf-8'],
  ['cache-control', 'no-cache'],
];

/** One of the engine's events on the wire: `event:`, then its data's one line. */
function eventBytes(event: SseEvent): Uint8Array {
  const data = typeof event.data === 'string' ? event.data : JSON.stringify(event.data);
  const head = event.event === undefined ? '' : `event: ${event.event}\n`;
  return utf8.encode(`${head}data: ${data}\n\n`);
}

function replyBody(
  format: ModelFormat,
  stream: boolean,
  answer: ModelAnswer,
  request: ModelRequestFacts,
): { sse: SseEvent[] } | { json: object } {
  const model = request.model ?? SHIMKIT_MODEL;
  const texts = answer.text === undefined ? [] : wordPieces(answer.text, TEXT_DELTAS);
  const calls = answer.calls.map((call, i) => ({
    name: call.name,
    id: toolCallId(format, answer.key, i + 1),
    arguments: call.arguments,
    pieces: codePointPieces(call.arguments, ARGUMENT_PIECES),
  }));
  // As the builders count: one output token per delta.
  const outputTokens = texts.length + calls.reduce((n, call) => n + call.pieces.length, 0);
  const { key } = answer;
  switch (format) {
    case 'chat': {
      const id = `chatcmpl-shimkit-${key}`;
      if (stream) {
        const toolCalls = calls.map((c) => ({ name: c.name, id: c.id, arguments: c.pieces }));
        const includeUsage = request.includeUsage === true;
        return { sse: chatEvents(texts, { id, model, toolCalls, includeUsage }) };
      }
      return { json: chatCompletion(id, model, answer.text, calls, outputTokens) };
    }
    case 'responses': {
      const head = { id: `resp_shimkit_${key}`, createdAt: SHIMKIT_CREATED, model };
      const messageId = `msg_shimkit_${key}`;
      const functionCalls = calls.map((c, i) => ({
        name: c.name,
        callId: c.id,
        id: `fc_shimkit_${key}_${i + 1}`,
        arguments: c.pieces,
      }));
      if (stream) {
        return { sse: responsesEvents(texts, { id: head.id, model, messageId, functionCalls }) };
      }
      const items: OutputItem[] = [];
      if (answer.text !== undefined) {
        items.push({ kind: 'message', id: messageId, pieces: [answer.text] });
      }
      for (const c of functionCalls) {
        items.push({
          kind: 'function_call',
          id: c.id,
          callId: c.callId,
          name: c.name,
          pieces: c.arguments,
        });
      }
      const output = items.map(finishedItem);
      return { json: responseObject(head, 'completed', output, responsesUsage(outputTokens)) };
    }
    case 'messages': {
      const id = `msg_shimkit_${key}`;
      if (stream) {
        const toolUse = calls.map((c) => ({ name: c.name, id: c.id, input: c.pieces }));
        return { sse: messagesEvents(texts, { id, model, toolUse }) };
      }
      return { json: anthropicMessage(id, model, answer.text, calls, outputTokens) };
    }
  }
}

type Call = { name: string; id: string; arguments: string };

/** A `chat.completion` object (openai 6.49.0 `ChatCompletion`). */
function chatCompletion(
  id: string,
  model: string,
  text: string | undefined,
  calls: readonly Call[],
  outputTokens: number,
): object {
  const toolCalls = calls.map((c) => ({
    id: c.id,
    type: 'function',
    function: { name: c.name, arguments: c.arguments },
  }));
  return {
    id,
    object: 'chat.completion',
    created: SHIMKIT_CREATED,
    model,
    system_fingerprint: SYSTEM_FINGERPRINT,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text ?? null,
          refusal: null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: calls.length > 0 ? 'tool_calls' : 'stop',
      },
    ],
    usage: {
      prompt_tokens: SHIMKIT_INPUT_TOKENS,
      completion_tokens: outputTokens,
      total_tokens: SHIMKIT_INPUT_TOKENS + outputTokens,
    },
  };
}

/** An Anthropic `message` object (@anthropic-ai/sdk 1.16.0 `Message`); a tool's `input` is its parsed arguments. */
function anthropicMessage(
  id: string,
  model: string,
  text: string | undefined,
  calls: readonly Call[],
  outputTokens: number,
): object {
  const content: object[] = text === undefined ? [] : [{ type: 'text', text }];
  for (const c of calls) {
    content.push({ type: 'tool_use', id: c.id, name: c.name, input: JSON.parse(c.arguments) });
  }
  return {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: calls.length > 0 ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: {
      input_tokens: SHIMKIT_INPUT_TOKENS,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: outputTokens,
    },
  };
}

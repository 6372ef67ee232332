import type { MockServerResponse, SseEvent } from 'shimkit';

/**
 * TEMPORARY: text-only stand-ins for the core's `sse.chat/responses/messages`
 * and `reply.status` (design §2, docs/design/sse-wire-formats.md §1a, 2a, 3a)
 * until the real ones (branch server-sse: src/server/sse/, src/server/reply.ts)
 * are merged with the core; then server-responses.ts imports `sse` and
 * `reply` from 'shimkit' and this file goes (the HT-10 tests pass with the
 * real builders: checked on a trial merge).
 */

const deltas = (text: string | string[]) => (typeof text === 'string' ? [text] : text);
const stream = (events: SseEvent[]): MockServerResponse => ({
  headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' },
  sse: events,
});

function chat(text: string | string[]): MockServerResponse {
  const chunk = (delta: object, finish: string | null) => ({
    data: {
      id: 'chatcmpl-shimkit-1',
      object: 'chat.completion.chunk',
      created: 1700000000,
      model: 'shimkit-model',
      system_fingerprint: 'fp_shimkit',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    },
  });
  return stream([
    chunk({ role: 'assistant', content: '', refusal: null }, null),
    ...deltas(text).map((content) => chunk({ content }, null)),
    chunk({}, 'stop'),
    { data: '[DONE]' },
  ]);
}

function responses(text: string | string[]): MockServerResponse {
  const all = deltas(text).join('');
  const part = { type: 'output_text', annotations: [], logprobs: [], text: all };
  const item = (status: string, content: object[]) => ({
    id: 'msg_shimkit_1',
    type: 'message',
    status,
    content,
    role: 'assistant',
  });
  const response = (status: string, output: object[]) => ({
    id: 'resp_shimkit_1',
    object: 'response',
    created_at: 1700000000,
    status,
    model: 'shimkit-model',
    output,
  });
  const ids = { item_id: 'msg_shimkit_1', output_index: 0, content_index: 0 };
  const body: Array<[string, object]> = [
    ['response.created', { response: response('in_progress', []) }],
    ['response.in_progress', { response: response('in_progress', []) }],
    ['response.output_item.added', { output_index: 0, item: item('in_progress', []) }],
    ['response.content_part.added', { ...ids, part: { ...part, text: '' } }],
    ...deltas(text).map((delta): [string, object] => [
      'response.output_text.delta',
      { ...ids, delta, logprobs: [] },
    ]),
    ['response.output_text.done', { ...ids, text: all, logprobs: [] }],
    ['response.content_part.done', { ...ids, part }],
    ['response.output_item.done', { output_index: 0, item: item('completed', [part]) }],
    ['response.completed', { response: response('completed', [item('completed', [part])]) }],
  ];
  return stream(
    body.map(([type, rest], n) => ({ event: type, data: { type, sequence_number: n, ...rest } })),
  );
}

function messages(text: string | string[]): MockServerResponse {
  const event = (type: string, rest: object = {}): SseEvent => ({
    event: type,
    data: { type, ...rest },
  });
  return stream([
    event('message_start', {
      message: {
        id: 'msg_shimkit_1',
        type: 'message',
        role: 'assistant',
        model: 'shimkit-model',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 9, output_tokens: 1 },
      },
    }),
    event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    event('ping'),
    ...deltas(text).map((t) =>
      event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: t } }),
    ),
    event('content_block_stop', { index: 0 }),
    event('message_delta', {
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: 2 },
    }),
    event('message_stop'),
  ]);
}

function status(
  code: number,
  options: { retryAfter?: number; retryAfterMs?: number } = {},
): MockServerResponse {
  const headers: Record<string, string> = {};
  const seconds =
    options.retryAfter ??
    (options.retryAfterMs === undefined ? undefined : Math.ceil(options.retryAfterMs / 1000));
  if (seconds !== undefined) headers['retry-after'] = String(seconds);
  if (options.retryAfterMs !== undefined) headers['retry-after-ms'] = String(options.retryAfterMs);
  const type =
    code === 429 ? 'rate_limit_error' : code >= 500 ? 'api_error' : 'invalid_request_error';
  return {
    status: code,
    headers,
    json: {
      type: 'error',
      error: { type, message: `shimkit: scripted ${code}`, code: null, param: null },
    },
  };
}

export const sse = { chat, responses, messages };
export const reply = { status };

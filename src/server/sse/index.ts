import { describeValue } from '../../internal/describe.js';
import { InvalidOptionError } from '../../internal/errors.js';
import type { MockServerResponse, SseEvent } from '../types.js';
import { chat } from './chat.js';
import { messages } from './messages.js';
import { builderOptions, type ResponseOptions, sseResponse } from './options.js';
import { responses } from './responses.js';

/**
 * A stream of exactly these events (HT-02): each is encoded as
 * `: comment` / `event:` / `id:` / `retry:` / one `data:` line per line,
 * then an empty line; `data` that is not a string is sent as its JSON.
 *
 * @example
 * api.enqueue(sse.events([{ event: 'update', id: '1', data: { n: 1 } }, { comment: 'keep-alive' }], { eventDelayMs: 50 }));
 */
export function events(list: SseEvent[], options?: ResponseOptions): MockServerResponse {
  const where = 'sse.events()';
  const o = builderOptions(options, [], where);
  if (!Array.isArray(list)) {
    throw new InvalidOptionError(
      `Expected the events of ${where} to be an array of { event?, data, id?, retry?, comment? }, got ${describeValue(list)}.`,
    );
  }
  const response = sseResponse(list, o, where);
  // Checked above; now a copy, so later changes to the caller's objects do not show.
  return { ...response, sse: structuredClone(list) };
}

/**
 * Builders of SSE responses in the wire formats of the common LLM APIs
 * (HT-08), byte for byte as the SDKs' own recordings, with deterministic
 * ids, `created` and model. Each returns plain response data: spread it,
 * add a `cut`, give it to `enqueue()` or `expect()`. Options that are
 * response fields (`status`, `headers`, `delayMs`, `eventDelayMs`, `cut`,
 * `times`, `optional`, `resetBeforeHeaders`) pass through.
 *
 * @example
 * api.expect({ path: '/v1/chat/completions' }, sse.chat(['Hel', 'lo']));
 * api.enqueue({ ...sse.messages(['Hello', ' there']), cut: { afterEvents: 4, how: 'fin' } });
 */
export const sse = {
  /** OpenAI Chat Completions (`POST /v1/chat/completions`). See {@link chat}. */
  chat,
  /** OpenAI Responses API (`POST /v1/responses`). See {@link responses}. */
  responses,
  /** Anthropic Messages (`POST /v1/messages`). See {@link messages}. */
  messages,
  /** Any events, as given. See {@link events}. */
  events,
} as const;

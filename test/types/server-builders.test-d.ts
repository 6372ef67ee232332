import { describe, expectTypeOf, it } from 'vitest';
import {
  type ChatStreamOptions,
  type MessagesStreamOptions,
  type MockServerResponse,
  type ResponseCut,
  type ResponseOptions,
  type ResponsesStreamOptions,
  reply,
  type SseEvent,
  sse,
} from '../../src/index.js';

describe('public types: sse and reply builders (HT-02, HT-08)', () => {
  it('HT-08 every builder returns MockServerResponse data, spreadable with response fields', () => {
    expectTypeOf(sse.chat('hi')).toEqualTypeOf<MockServerResponse>();
    expectTypeOf(sse.responses(['a', 'b'])).toEqualTypeOf<MockServerResponse>();
    expectTypeOf(sse.messages([])).toEqualTypeOf<MockServerResponse>();
    expectTypeOf(sse.events([{ data: 'x' }])).toEqualTypeOf<MockServerResponse>();
    expectTypeOf(reply.status(429, { retryAfterMs: 1 })).toEqualTypeOf<MockServerResponse>();
    const cut: ResponseCut = { afterEvents: 2, how: 'fin' };
    const spread: MockServerResponse = { ...sse.chat('hi'), cut };
    expectTypeOf(spread.sse).toEqualTypeOf<SseEvent[] | undefined>();
    expectTypeOf<ChatStreamOptions>().toExtend<ResponseOptions>();
    expectTypeOf<ResponsesStreamOptions>().toExtend<ResponseOptions>();
    expectTypeOf<MessagesStreamOptions>().toExtend<ResponseOptions>();
    expectTypeOf<MockServerResponse['times']>().toEqualTypeOf<number | 'always' | undefined>();
    // @ts-expect-error unknown option
    sse.chat('hi', { finishreason: 'stop' });
    // @ts-expect-error text is a string or strings
    sse.messages(5);
    // @ts-expect-error wire takes no status
    reply.wire('x', { status: 200 });
  });
});

// The builders' contract (HT-02, HT-08): plain data out, response fields
// passed through, ids overridable, options checked when given.
import { describe, expect, it } from 'vitest';
import { InvalidOptionError, InvalidResponseError, reply, sse } from '../../src/index.js';
import { toWireResponse } from '../../src/server/response.js';

const datas = (response: { sse?: Array<{ data?: unknown }> }) =>
  (response.sse ?? []).map((e) => e.data as Record<string, unknown>);

describe('sse and reply builders', () => {
  it('HT-02 builders return plain data: response fields pass through, as a spread would add them', () => {
    const cut = { afterEvents: 2, how: 'fin' as const };
    expect(sse.chat('hi', { cut })).toEqual({ ...sse.chat('hi'), cut });
    const fields = {
      status: 201,
      headers: { 'x-request-id': 'req_1' },
      delayMs: 5,
      eventDelayMs: 10,
      times: 2,
      optional: true,
      resetBeforeHeaders: false,
    };
    expect(sse.responses('hi', fields)).toEqual({ ...sse.responses('hi'), ...fields });
    expect(sse.messages('hi', fields)).toEqual({ ...sse.messages('hi'), ...fields });
    expect(sse.events([{ data: 'x' }], fields)).toEqual({ sse: [{ data: 'x' }], ...fields });
    const response = sse.chat(['a', 'b']);
    expect(JSON.parse(JSON.stringify(response))).toEqual(response);
    expect(reply.json({ a: 1 }, { status: 202 })).toEqual({ json: { a: 1 }, status: 202 });
    expect(reply.text('x', { times: 'always' })).toEqual({ text: 'x', times: 'always' });
  });

  it('HT-02 a builder copies what it is given: later changes to the caller objects do not show', () => {
    const headers = { 'x-a': '1' };
    const events = [{ data: { n: 1 } }];
    const built = sse.events(events, { headers });
    headers['x-a'] = '2';
    (events[0] as { data: { n: number } }).data.n = 2;
    expect(built).toEqual({ sse: [{ data: { n: 1 } }], headers: { 'x-a': '1' } });
  });

  it('HT-08 ids, model and timestamps are deterministic and overridable', () => {
    expect(sse.chat('a')).toEqual(sse.chat('a'));
    const chat = datas(
      sse.chat('a', { id: 'c1', model: 'gpt-x', created: 5, systemFingerprint: null }),
    );
    expect(chat[0]).toMatchObject({
      id: 'c1',
      model: 'gpt-x',
      created: 5,
      system_fingerprint: null,
    });
    const calls = datas(
      sse.chat([], {
        toolCalls: [{ name: 'a' }, { name: 'b', id: 'call_x', arguments: { q: 1 } }],
      }),
    );
    const headers = calls.flatMap((c) => {
      const delta = (
        c.choices as Array<{ delta: { tool_calls?: Array<Record<string, unknown>> } }> | undefined
      )?.[0]?.delta;
      return (delta?.tool_calls ?? []).filter((t) => t.id !== undefined);
    });
    expect(headers.map((h) => [h.index, h.id])).toEqual([
      [0, 'call_shimkit_1'],
      [1, 'call_x'],
    ]);
    expect(JSON.stringify(calls)).toContain('"arguments":"{}"');
    expect(JSON.stringify(calls)).toContain('"arguments":"{\\"q\\":1}"');
    const resp = datas(sse.responses('a', { id: 'r1', model: 'm', createdAt: 7, messageId: 'm1' }));
    expect(resp[0]).toMatchObject({ response: { id: 'r1', model: 'm', created_at: 7 } });
    expect(resp[2]).toMatchObject({ item: { id: 'm1' } });
    const msg = datas(sse.messages('a', { id: 'x1', model: 'claude-x', toolUse: [{ name: 't' }] }));
    expect(msg[0]).toMatchObject({ message: { id: 'x1', model: 'claude-x' } });
    expect(JSON.stringify(msg)).toContain('"id":"toolu_shimkit_1"');
  });

  it('HT-08 finish and stop reasons: defaults follow the content, options override', () => {
    const finish = (r: ReturnType<typeof sse.chat>) =>
      datas(r)
        .flatMap((d) => (d.choices as Array<{ finish_reason: string | null }> | undefined) ?? [])
        .map((c) => c.finish_reason)
        .filter((f) => f !== null);
    expect(finish(sse.chat('a'))).toEqual(['stop']);
    expect(finish(sse.chat([], { toolCalls: [{ name: 't' }] }))).toEqual(['tool_calls']);
    expect(finish(sse.chat('a', { finishReason: 'length' }))).toEqual(['length']);
    const stop = (r: ReturnType<typeof sse.messages>) =>
      datas(r).find((d) => d.type === 'message_delta')?.delta;
    expect(stop(sse.messages('a'))).toEqual({ stop_reason: 'end_turn', stop_sequence: null });
    expect(stop(sse.messages([], { toolUse: [{ name: 't' }] }))).toMatchObject({
      stop_reason: 'tool_use',
    });
    expect(stop(sse.messages('a', { stopReason: 'stop_sequence', stopSequence: '###' }))).toEqual({
      stop_reason: 'stop_sequence',
      stop_sequence: '###',
    });
    expect(sse.messages('a', { ping: false }).sse?.some((e) => e.event === 'ping')).toBe(false);
    expect(sse.responses('a', { inProgress: false }).sse?.map((e) => e.event)).not.toContain(
      'response.in_progress',
    );
  });

  it('HT-08 usage defaults count the deltas; given counts win and the total follows', () => {
    const last = (r: ReturnType<typeof sse.chat>) => datas(r).at(-2)?.usage;
    expect(last(sse.chat(['a', 'b', 'c'], { includeUsage: true }))).toEqual({
      prompt_tokens: 9,
      completion_tokens: 3,
      total_tokens: 12,
    });
    expect(
      last(sse.chat('a', { usage: { completion_tokens: 5, completion_tokens_details: { x: 1 } } })),
    ).toEqual({
      prompt_tokens: 9,
      completion_tokens: 5,
      total_tokens: 14,
      completion_tokens_details: { x: 1 },
    });
    const completed = datas(sse.responses(['a', 'b'], { usage: { input_tokens: 1 } })).at(-1);
    expect(completed).toMatchObject({
      response: { usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 } },
    });
    const start = datas(sse.messages(['a', 'b'], { usage: { input_tokens: 3 } }));
    expect(start[0]).toMatchObject({ message: { usage: { input_tokens: 3, output_tokens: 1 } } });
    expect(start.find((d) => d.type === 'message_delta')?.usage).toEqual({ output_tokens: 2 });
  });

  it('HT-02 bad builder options are InvalidOptionError, naming the builder and the option', () => {
    const bad = (fn: () => unknown) => expect(fn).toThrow(InvalidOptionError);
    bad(() => sse.chat(5 as never));
    expect(() => sse.chat(['a', 1] as never)).toThrow(
      'Expected the text argument of sse.chat() to be a string (one delta) or an array of strings',
    );
    expect(() => sse.chat('a', { finishreason: 'stop' } as never)).toThrow(
      'Unknown option `finishreason` for sse.chat(). Did you mean `finishReason`?',
    );
    expect(() => sse.chat('a', { toolCalls: [{ arguments: '{}' }] as never })).toThrow(
      'Expected the `toolCalls[0].name` option of sse.chat() to be a string, got undefined',
    );
    expect(() => sse.chat('a', { toolCalls: {} as never })).toThrow(
      '`toolCalls` option of sse.chat()',
    );
    expect(() => sse.chat('a', { toolCalls: [{ name: 'x', arguments: 3 as never }] })).toThrow(
      '`toolCalls[0].arguments` option',
    );
    expect(() => sse.chat('a', { created: -1 })).toThrow(
      '`created` option of sse.chat() to be a non-negative integer',
    );
    expect(() => sse.chat('a', { includeUsage: 'yes' as never })).toThrow('`includeUsage`');
    expect(() => sse.chat('a', { usage: { prompt_tokens: -3 } })).toThrow('`usage.prompt_tokens`');
    expect(() => sse.chat('a', { error: { msg: 'x' } as never })).toThrow(
      'Unknown option `msg` for the `error` option of sse.chat()',
    );
    expect(() => sse.responses('a', { reasoning: 'x', reasoningText: 'y' })).toThrow(
      'got both `reasoning`',
    );
    expect(() => sse.responses('a', { functionCalls: [{ name: 1 }] as never })).toThrow(
      '`functionCalls[0].name`',
    );
    expect(() => sse.messages('a', { thinking: 5 as never })).toThrow(InvalidOptionError);
    expect(() => sse.messages('a', { toolUse: [{ name: 't', input: 5 as never }] })).toThrow(
      '`toolUse[0].input`',
    );
    expect(() => sse.events('x' as never)).toThrow(
      'Expected the events of sse.events() to be an array',
    );
    expect(() => reply.json(undefined)).toThrow(
      'Expected the body of reply.json() to be a JSON value',
    );
    expect(() => reply.text(1 as never)).toThrow(
      'Expected the text of reply.text() to be a string',
    );
    expect(() => reply.status(42)).toThrow(
      'Expected the status code of reply.status(42) to be an integer from 200 to 999',
    );
    expect(() => reply.status(429, { status: 500 })).toThrow('the status is its first argument');
    expect(() => reply.status(429, { retryAfterMs: -1 })).toThrow(
      '`retryAfterMs` option of reply.status(429)',
    );
    expect(() => reply.raw(5 as never)).toThrow(
      'Expected the bytes of reply.raw() to be a Uint8Array',
    );
    expect(() => reply.wire('x', { status: 200 } as never)).toThrow(
      'Unknown option `status` for reply.wire()',
    );
  });

  it('HT-02 response fields given to a builder are checked at once (InvalidResponseError)', () => {
    expect(() => sse.chat('a', { cut: { afterEvents: 9, how: 'fin' } })).toThrow(
      InvalidResponseError,
    );
    expect(() => sse.chat('a', { cut: { afterEvents: 9, how: 'fin' } })).toThrow(
      'sse.chat(): cut.afterEvents must be at most the number of events, 4',
    );
    expect(() => sse.messages('a', { status: 99 })).toThrow('sse.messages(): status must be');
    expect(() => reply.json({}, { eventDelayMs: 1 })).toThrow('sets `eventDelayMs` without `sse`');
  });

  it('HT-08 reply.raw and reply.wire carry bytes exactly (strings as UTF-8)', () => {
    expect(reply.raw(new Uint8Array([0, 1, 255]))).toEqual({ bodyBase64: 'AAH/' });
    const slice = Buffer.from('xxabyy').subarray(2, 4);
    expect(reply.raw(slice)).toEqual({ bodyBase64: Buffer.from('ab').toString('base64') });
    expect(reply.raw('é')).toEqual({ bodyBase64: Buffer.from('é').toString('base64') });
    const w = reply.wire('HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nab', { times: 2 });
    expect(toWireResponse(w, 'w')).toMatchObject({ kind: 'wire', status: 200, times: 2 });
    expect(reply.status(204)).toEqual({ status: 204 });
    expect(
      reply.status(500, {
        headers: { 'x-should-retry': 'false' },
        message: 'boom',
        errorCode: 'e1',
      }),
    ).toEqual({
      status: 500,
      headers: { 'x-should-retry': 'false' },
      json: {
        type: 'error',
        error: { type: 'api_error', message: 'boom', code: 'e1', param: null },
      },
    });
    expect(reply.status(429, { retryAfter: 1, headers: { 'Retry-After': '7' } }).headers).toEqual({
      'retry-after-ms': '1000',
      'Retry-After': '7',
    });
  });
});

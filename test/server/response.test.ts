// toWireResponse (HT-02): a MockServerResponse checked and encoded once,
// as the serving thread writes it; and encodeSseEvent's bytes (HT-08).
import { describe, expect, it } from 'vitest';
import { InvalidResponseError } from '../../src/index.js';
import { toWireResponse } from '../../src/server/response.js';
import { encodeSseEvent } from '../../src/server/sse/encode.js';

const W = 'the response passed to enqueue() #2';
const wire = (value: unknown) => toWireResponse(value, W);
const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');
const bad = (value: unknown) => () => wire(value);
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('toWireResponse', () => {
  it('HT-02 an empty response is a 200 with an empty body, used once', () => {
    expect(wire({})).toEqual({
      status: 200,
      headers: [],
      kind: 'body',
      pieces: [new Uint8Array(0)],
      gaps: [0],
      delayMs: 0,
      cut: undefined,
      resetBeforeHeaders: false,
      times: 1,
      optional: false,
      retryable: false,
    });
  });

  it('HT-02 json, text and bodyBase64 are one piece with their default content-type', () => {
    const json = wire({ status: 201, json: { ok: true, n: [1] } });
    expect(json.status).toBe(201);
    expect(json.headers).toEqual([['content-type', 'application/json']]);
    expect(json.kind).toBe('body');
    expect(json.pieces.map(text)).toEqual(['{"ok":true,"n":[1]}']);
    expect(wire({ json: null }).pieces.map(text)).toEqual(['null']);
    const t = wire({ text: 'héllo ✓' });
    expect(t.headers).toEqual([['content-type', 'text/plain; charset=utf-8']]);
    expect(t.pieces.map(text)).toEqual(['héllo ✓']);
    const raw = wire({ bodyBase64: Buffer.from([0, 255, 10]).toString('base64') });
    expect(raw.headers).toEqual([]);
    expect([...(raw.pieces[0] as Uint8Array)]).toEqual([0, 255, 10]);
  });

  it('HT-02 headers: names lower-cased, lists repeated, defaults kept unless set (an empty list drops one)', () => {
    const r = wire({
      text: 'x',
      headers: { 'X-Request-Id': 'req_1', 'Set-Cookie': ['a=1', 'b=2'], 'x-none': [] },
    });
    expect(r.headers).toEqual([
      ['content-type', 'text/plain; charset=utf-8'],
      ['x-request-id', 'req_1'],
      ['set-cookie', 'a=1'],
      ['set-cookie', 'b=2'],
    ]);
    expect(
      wire({ json: 1, headers: { 'Content-Type': 'application/problem+json' } }).headers,
    ).toEqual([['content-type', 'application/problem+json']]);
    expect(wire({ json: 1, headers: { 'content-type': [] } }).headers).toEqual([]);
    expect(wire({ sse: [], headers: { 'cache-control': 'no-store' } }).headers).toEqual([
      ['content-type', 'text/event-stream; charset=utf-8'],
      ['cache-control', 'no-store'],
    ]);
    expect(wire({ headers: { 'x-latin': 'caf\u00e9', 'x-skip': undefined } }).headers).toEqual([
      ['x-latin', 'café'],
    ]);
  });

  it('HT-02 sse: one pre-encoded piece per event, eventDelayMs before each but the first', () => {
    const r = wire({
      sse: [{ data: 'a' }, { event: 'x', data: { n: 1 } }, { comment: 'keep-alive' }],
      eventDelayMs: 15,
      delayMs: 5,
    });
    expect(r.kind).toBe('sse');
    expect(r.headers).toEqual([
      ['content-type', 'text/event-stream; charset=utf-8'],
      ['cache-control', 'no-cache'],
    ]);
    expect(r.pieces.map(text)).toEqual([
      'data: a\n\n',
      'event: x\ndata: {"n":1}\n\n',
      ': keep-alive\n\n',
    ]);
    expect(r.gaps).toEqual([0, 15, 15]);
    expect(r.delayMs).toBe(5);
  });

  it('HT-02 chunks: one piece per chunk (text or base64), each after its own delayMs', () => {
    const r = wire({ chunks: [{ text: 'ab' }, { base64: b64('cd'), delayMs: 2.5 }, { text: '' }] });
    expect(r.kind).toBe('chunks');
    expect(r.headers).toEqual([]);
    expect(r.pieces.map(text)).toEqual(['ab', 'cd', '']);
    expect(r.gaps).toEqual([0, 2.5, 0]);
  });

  it('HT-02 wireBase64 is the whole answer: one piece, no headers, the status read from its status line', () => {
    const bytes = 'HTTP/1.1 502 Bad Gateway\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n';
    const r = wire({ wireBase64: b64(bytes), times: 2, delayMs: 1 });
    expect(r).toMatchObject({ kind: 'wire', status: 502, headers: [], gaps: [0], times: 2 });
    expect(r.pieces.map(text)).toEqual([bytes]);
    expect(wire({ wireBase64: b64('garbage') }).status).toBe(0);
  });

  it('HT-02 times, optional, resetBeforeHeaders and cut are carried; times "always" is Infinity', () => {
    const r = wire({
      sse: [{ data: 'a' }, { data: 'b' }],
      cut: { afterEvents: 1, how: 'rst' },
      times: 'always',
      optional: true,
      resetBeforeHeaders: true,
    });
    expect(r).toMatchObject({
      cut: { afterEvents: 1, how: 'rst' },
      times: Number.POSITIVE_INFINITY,
      optional: true,
      resetBeforeHeaders: true,
    });
    expect(wire({ text: 'abc', cut: { afterBytes: 3, how: 'fin' } }).cut).toEqual({
      afterBytes: 3,
      how: 'fin',
    });
    expect(wire({ sse: [], cut: { afterEvents: 0, how: 'stall' } }).cut).toEqual({
      afterEvents: 0,
      how: 'stall',
    });
    // Fields set to undefined are absent (so { ...sse.chat('x'), cut: undefined } works).
    expect(wire({ text: 'x', cut: undefined, json: undefined, times: undefined }).times).toBe(1);
  });

  it('HT-02 the result is structured-clone safe and holds no shared buffer memory', () => {
    const r = wire({ chunks: [{ base64: b64('x'.repeat(10)) }, { text: 'y' }] });
    expect(structuredClone(r)).toEqual(r);
    for (const piece of r.pieces) {
      expect(Object.getPrototypeOf(piece)).toBe(Uint8Array.prototype);
      expect(piece.byteOffset).toBe(0);
      expect(piece.buffer.byteLength).toBe(piece.byteLength);
    }
  });

  it('HT-02 bad input: not an object, unknown keys, two bodies, wire with other fields', () => {
    expect(bad(null)).toThrow(InvalidResponseError);
    expect(bad('hi')).toThrow(`Expected ${W} to be an object`);
    expect(bad([])).toThrow('got [] (array)');
    expect(bad({ body: 'x' })).toThrow(`Unknown key \`body\` in ${W}.`);
    expect(bad({ stauts: 200 })).toThrow('Did you mean `status`?');
    expect(bad({ json: 1, text: 'x' })).toThrow(`${W} sets both \`json\` and \`text\``);
    expect(bad({ sse: [], chunks: [] })).toThrow('sets both `sse` and `chunks`');
    expect(bad({ wireBase64: '', status: 200 })).toThrow('sets `wireBase64` with `status`');
    expect(bad({ wireBase64: '', headers: {} })).toThrow('sets `wireBase64` with `headers`');
    expect(bad({ wireBase64: '', cut: { afterBytes: 0, how: 'fin' } })).toThrow(
      'sets `wireBase64` with `cut`',
    );
    expect(bad({ wireBase64: '', text: '' })).toThrow('sets `wireBase64` with `text`');
  });

  it('HT-02 bad input: status, headers', () => {
    for (const status of [99, 1000, 200.5, '200', null]) {
      expect(bad({ status })).toThrow(`${W}: status must be an integer from 200 to 999`);
    }
    expect(bad({ headers: [] })).toThrow('headers must be an object');
    expect(bad({ headers: 'x: y' })).toThrow('headers must be an object');
    expect(bad({ headers: { 'x\r\ny': 'v' } })).toThrow('a header name without CR or LF');
    expect(bad({ headers: { 'x y': 'v' } })).toThrow('headers must be keyed by a header name of');
    expect(bad({ headers: { x: 'a\r\nInjected: 1' } })).toThrow(
      `${W}: headers["x"] must be a header value without CR or LF`,
    );
    expect(bad({ headers: { x: ['ok', 'a\nb'] } })).toThrow(
      'headers["x"][1] must be a header value',
    );
    expect(bad({ headers: { x: 'snow ☃' } })).toThrow('it has U+2603');
    expect(bad({ headers: { x: 1 } })).toThrow('headers["x"] must be a string');
    expect(bad({ headers: { x: [1] } })).toThrow('headers["x"][0] must be a string');
    expect(bad({ headers: { 'X-A': '1', 'x-a': '2' } })).toThrow('headers sets `x-a` twice');
  });

  it('HT-02 bad input: bodies (json, text, base64, sse, chunks)', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(bad({ json: cyclic })).toThrow(`${W}: json must be a JSON value; JSON.stringify failed`);
    expect(bad({ json: () => 1 })).toThrow('json must be a JSON value, got a function');
    expect(bad({ json: 1n })).toThrow('JSON.stringify failed');
    expect(bad({ text: 1 })).toThrow(`${W}: text must be a string, got 1 (number)`);
    expect(bad({ text: 'a\uD800b' })).toThrow('a lone surrogate at index 1');
    for (const bodyBase64 of ['abc', 'ab=c', 'YQ==\n', 'YR==', 'Y Q==', 'Y-_=', 1]) {
      expect(bad({ bodyBase64 })).toThrow(`${W}: bodyBase64 must be canonical base64`);
    }
    expect(bad({ wireBase64: '%%' })).toThrow('wireBase64 must be canonical base64');
    expect(bad({ sse: { data: 'x' } })).toThrow('sse must be an array of SSE events');
    expect(bad({ sse: [{ data: 'x' }, 'data: y'] })).toThrow(
      `Expected ${W}: sse[1] to be an object`,
    );
    expect(bad({ sse: [{ data: 'x', name: 'y' }] })).toThrow(
      `Unknown key \`name\` in ${W}: sse[0]`,
    );
    expect(bad({ sse: [{ event: 'a\nb', data: '' }] })).toThrow(
      `${W}: sse[0].event must be a string without CR or LF`,
    );
    expect(bad({ sse: [{ id: 'a\rb', data: '' }] })).toThrow(
      'sse[0].id must be a string without CR',
    );
    expect(bad({ sse: [{ id: 'a\0b', data: '' }] })).toThrow(
      'sse[0].id must be a string without NUL',
    );
    expect(bad({ sse: [{ event: 1, data: '' }] })).toThrow('sse[0].event must be a string');
    for (const retry of [-1, 1.5, Number.NaN, '10', Number.POSITIVE_INFINITY]) {
      expect(bad({ sse: [{ retry, data: '' }] })).toThrow(
        'sse[0].retry must be a non-negative integer',
      );
    }
    expect(bad({ sse: [{ data: 'a\r\nb' }] })).toThrow('sse[0].data must be a string without CR');
    expect(bad({ sse: [{ data: () => 1 }] })).toThrow(
      'sse[0].data must be a string or a JSON value',
    );
    expect(bad({ sse: [{ event: 'x' }] })).toThrow('sse[0].data must be given with `event`');
    expect(bad({ sse: [{}] })).toThrow('sse[0].data must be given');
    expect(bad({ sse: [{ comment: 3 }] })).toThrow('sse[0].comment must be a string');
    expect(bad({ chunks: 'x' })).toThrow('chunks must be an array');
    expect(bad({ chunks: [null] })).toThrow(`${W}: chunks[0] must be an object`);
    expect(bad({ chunks: [{ text: 'a', base64: 'YQ==' }] })).toThrow(
      'chunks[0] must have exactly one of `text` and `base64`',
    );
    expect(bad({ chunks: [{ delayMs: 1 }] })).toThrow('chunks[0] must have exactly one of');
    expect(bad({ chunks: [{ text: 'a', wait: 1 }] })).toThrow('Unknown key `wait` in');
    expect(bad({ chunks: [{ text: 1 }] })).toThrow('chunks[0].text must be a string');
    expect(bad({ chunks: [{ base64: '!' }] })).toThrow('chunks[0].base64 must be canonical base64');
  });

  it('HT-02 bad input: delays, times, optional, resetBeforeHeaders', () => {
    for (const ms of [-1, Number.NaN, Number.POSITIVE_INFINITY, '5', 2 ** 31]) {
      expect(bad({ delayMs: ms })).toThrow(`${W}: delayMs must be a number of milliseconds`);
      expect(bad({ sse: [], eventDelayMs: ms })).toThrow('eventDelayMs must be a number');
      expect(bad({ chunks: [{ text: 'a', delayMs: ms }] })).toThrow('chunks[0].delayMs must be');
    }
    expect(bad({ text: 'x', eventDelayMs: 5 })).toThrow('sets `eventDelayMs` without `sse`');
    for (const times of [0, -1, 1.5, 1_000_001, 'forever', Number.POSITIVE_INFINITY]) {
      expect(bad({ times })).toThrow(
        `${W}: times must be an integer from 1 to 1000000, or 'always'`,
      );
    }
    expect(bad({ optional: 'yes' })).toThrow(`${W}: optional must be true or false`);
    expect(bad({ resetBeforeHeaders: 1 })).toThrow('resetBeforeHeaders must be true or false');
    expect(bad({ retryable: 'yes' })).toThrow(`${W}: retryable must be true or false`);
  });

  it('HT-16 retryable is carried (false unless set), beside wireBase64 too', () => {
    expect(wire({ text: 'x', retryable: true }).retryable).toBe(true);
    expect(wire({ text: 'x' }).retryable).toBe(false);
    expect(wire({ wireBase64: b64('HTTP/1.1 200 OK\r\n\r\n'), retryable: true }).retryable).toBe(
      true,
    );
  });

  it('HT-02 scripted framing headers that contradict the body are refused: content-length other than its length, transfer-encoding other than chunked, both', () => {
    expect(bad({ json: { a: 1 }, headers: { 'content-length': '999' } })).toThrow(
      `${W}: headers["content-length"] is "999", but the json body is 7 bytes: the client would wait for bytes that never come, or read the next response as part of this one, while the log says complete. Leave content-length out (shimkit sets it from the body); to cut the body short use cut: { afterBytes, how }; to send wrong framing on purpose, give the whole answer as wireBase64 (reply.wire()).`,
    );
    expect(bad({ text: 'hello', headers: { 'Content-Length': '4' } })).toThrow(
      InvalidResponseError,
    );
    expect(bad({ bodyBase64: b64('xyz'), headers: { 'content-length': ['3', '4'] } })).toThrow(
      'headers["content-length"] is "4", but the bodyBase64 body is 3 bytes',
    );
    expect(bad({ headers: { 'content-length': '10' } })).toThrow('but the empty body is 0 bytes');
    expect(bad({ status: 204, headers: { 'content-length': '5' } })).toThrow(
      'is "5", but a 204 has no body',
    );
    expect(bad({ sse: [{ data: 'a' }], headers: { 'content-length': '1' } })).toThrow(
      'but the sse body is 9 bytes',
    );
    expect(bad({ json: 1, headers: { 'transfer-encoding': 'gzip, chunked' } })).toThrow(
      `${W}: headers["transfer-encoding"] is "gzip, chunked", but shimkit sends the json body as it is, without that coding`,
    );
    expect(
      bad({ json: 1, headers: { 'transfer-encoding': 'chunked', 'content-length': '1' } }),
    ).toThrow('headers sets both `content-length` and `transfer-encoding`');
    // What does not contradict the body stays possible.
    expect(wire({ json: { a: 1 }, headers: { 'content-length': '7' } }).headers).toContainEqual([
      'content-length',
      '7',
    ]);
    expect(wire({ json: 1, headers: { 'transfer-encoding': 'chunked' } }).kind).toBe('body');
    expect(wire({ status: 304, headers: { 'content-length': '120' } }).status).toBe(304);
    expect(wire({ wireBase64: b64('HTTP/1.1 200 OK\r\ncontent-length: 999\r\n\r\nab') }).kind).toBe(
      'wire',
    );
  });

  it('HT-02 bad input: cut', () => {
    const sse = [{ data: 'a' }, { data: 'b' }];
    expect(bad({ sse, cut: 'fin' })).toThrow(`${W}: cut must be an object`);
    expect(bad({ sse, cut: { afterEvents: 1 } })).toThrow(
      `${W}: cut.how must be "fin", "rst" or "stall", got undefined`,
    );
    expect(bad({ sse, cut: { afterEvents: 1, how: 'close' } })).toThrow('cut.how must be');
    expect(bad({ sse, cut: { how: 'fin' } })).toThrow('cut must have exactly one of');
    expect(bad({ sse, cut: { afterEvents: 1, afterBytes: 1, how: 'fin' } })).toThrow(
      'cut must have exactly one of',
    );
    expect(bad({ sse, cut: { afterEvents: -1, how: 'fin' } })).toThrow(
      `${W}: cut.afterEvents must be a non-negative integer, got -1 (number).`,
    );
    expect(bad({ sse, cut: { afterEvents: 0.5, how: 'fin' } })).toThrow('cut.afterEvents must be');
    expect(bad({ sse, cut: { afterEvents: 3, how: 'fin' } })).toThrow(
      'cut.afterEvents must be at most the number of events, 2',
    );
    expect(bad({ text: 'abc', cut: { afterEvents: 1, how: 'fin' } })).toThrow(
      'cut.afterEvents needs an `sse` body',
    );
    expect(bad({ text: 'abc', cut: { afterBytes: 4, how: 'fin' } })).toThrow(
      'cut.afterBytes must be at most the body length, 3',
    );
    expect(bad({ text: 'abc', cut: { afterBytes: '1', how: 'fin' } })).toThrow(
      'cut.afterBytes must be',
    );
    expect(bad({ sse, cut: { after: 1, how: 'fin' } })).toThrow(
      `Unknown key \`after\` in ${W}: cut`,
    );
  });

  it('HT-02 a getter that throws is reported as unreadable, not as a crash', () => {
    const value = {
      get text(): string {
        throw new Error('boom');
      },
    };
    expect(() => wire(value)).toThrow(`Could not read ${W}: Error: boom`);
  });
});

describe('encodeSseEvent', () => {
  const enc = (event: Parameters<typeof encodeSseEvent>[0]) => text(encodeSseEvent(event));

  it('HT-08 fields in order: comment, event, id, retry, one data line per LF-separated line, blank line', () => {
    expect(enc({ data: 'l1\nl2\n', event: 'e', id: '7', retry: 1500, comment: 'c1\nc2' })).toBe(
      ': c1\n: c2\nevent: e\nid: 7\nretry: 1500\ndata: l1\ndata: l2\ndata: \n\n',
    );
    expect(enc({ data: '' })).toBe('data: \n\n');
    expect(enc({ data: ' lead' })).toBe('data:  lead\n\n');
    expect(enc({ data: { a: 'x\r\ny' } })).toBe('data: {"a":"x\\r\\ny"}\n\n');
    expect(enc({ data: null })).toBe('data: null\n\n');
    expect(enc({ data: '[DONE]' })).toBe('data: [DONE]\n\n');
    expect(enc({ comment: '' })).toBe(': \n\n');
    expect(enc({ id: '' })).toBe('id: \n\n');
  });

  it('HT-08 errors without a where name the SSE event', () => {
    expect(() => encodeSseEvent({ data: 'a\rb' })).toThrow("the SSE event's data must be");
  });
});

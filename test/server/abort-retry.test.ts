import { execFileSync } from 'node:child_process';
// Clients that leave and come back (issue 38, "Mock server under fire"):
// a request half sent, then closed or reset (HT-07); framing headers a
// scripted response may not set (HT-02); a `retryable` response given back
// to the retry of a client that left before its end (HT-16).
import { request } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { InvalidResponseError, type MockServer, reply, sse } from '../../src/index.js';
import { curl, server } from '../helpers/server.js';

/** Write `bytes` on a new connection, then close it (`fin`) or reset it (`rst`); resolves when it is closed. */
function leave(api: MockServer, bytes: string, how: 'fin' | 'rst'): Promise<void> {
  const { port } = new URL(api.url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write(bytes, () => (how === 'fin' ? socket.end() : socket.resetAndDestroy()));
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve());
    socket.resume();
  });
}

/** GET `path`; the request is destroyed (the client leaves) once `leaveWhen` is true, polled. Resolves with the body, or null when it left. */
function get(
  api: MockServer,
  path: string,
  leaveWhen?: (received: string) => boolean,
): Promise<string | null> {
  return new Promise((resolve) => {
    let received = '';
    let left = false;
    const req = request(`${api.url}${path}`, { agent: false }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        received += chunk;
      });
      res.on('end', () => resolve(received));
      res.on('error', () => {});
    });
    req.on('error', () => resolve(null));
    req.on('close', () => resolve(left ? null : received));
    req.end();
    if (leaveWhen) {
      const poll = setInterval(() => {
        if (!leaveWhen(received)) return;
        clearInterval(poll);
        left = true;
        req.destroy();
      }, 5);
      req.on('close', () => clearInterval(poll));
    }
  });
}

describe('a request half sent (HT-07)', () => {
  it('HT-07 a request whose client leaves (FIN or RST) inside its head is not logged; in its body it is logged as what came: method, path, the bytes read, client-abort, unclaimed', async () => {
    const api = await server();
    api.enqueue({ text: 'the only response' });
    for (const how of ['fin', 'rst'] as const) {
      await leave(api, 'GET /par', how);
      await leave(api, 'POST /v1/head HTTP/1.1\r\nHost: x\r\nConte', how);
    }
    // Nothing of the four is logged, nor waited for: the next request is #1.
    expect((await curl([`${api.url}/marker`])).stdout.toString()).toBe('the only response');
    expect(api.requests().map((r) => [r.seq, r.path])).toEqual([[1, '/marker']]);
    expect((await api.waitForRequests(1)).map((r) => r.path)).toEqual(['/marker']);
    api.enqueue({ text: 'still here' });
    for (const how of ['fin', 'rst'] as const) {
      await leave(
        api,
        `POST /v1/len-${how} HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly a part`,
        how,
      );
      await leave(
        api,
        `POST /v1/chunked-${how} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n`,
        how,
      );
    }
    await expect.poll(() => api.requests().length).toBe(5);
    const half = api.requests().slice(1);
    expect(half.map((r) => r.path).sort()).toEqual([
      '/v1/chunked-fin',
      '/v1/chunked-rst',
      '/v1/len-fin',
      '/v1/len-rst',
    ]);
    for (const r of half) {
      const chunked = r.path.startsWith('/v1/chunked');
      expect(r).toMatchObject({
        method: 'POST',
        claimedBy: null,
        bodyBytes: chunked ? 5 : 11,
        response: { status: undefined, bytesSent: 0, endedBy: 'client-abort' },
      });
      expect(r.body.toString()).toBe(chunked ? 'hello' : 'only a part');
      expect(r.error).toBe(
        `shimkit: the client closed its connection in the middle of the body of POST ${r.path} (request #${r.seq}), after ${chunked ? '5 bytes of its chunked body' : '11 of the 100 bytes its content-length declared'}; nothing was claimed or answered.`,
      );
    }
    // Nothing was claimed: the FIFO's entry answers the next request.
    expect((await curl([`${api.url}/after`])).stdout.toString()).toBe('still here');
  });
});

describe('scripted framing (HT-02)', () => {
  it('HT-02 a content-length or transfer-encoding that contradicts the scripted body is refused at enqueue() and expect(); reply.wire() still sends wrong framing on purpose', async () => {
    const api = await server();
    expect(() => api.enqueue({ json: { ok: true }, headers: { 'content-length': '999' } })).toThrow(
      InvalidResponseError,
    );
    expect(() => api.enqueue({ json: { ok: true }, headers: { 'content-length': '999' } })).toThrow(
      'the response passed to enqueue() #1: headers["content-length"] is "999", but the json body is 11 bytes',
    );
    expect(() =>
      api.expect({ path: '/x' }, { text: 'hi', headers: { 'transfer-encoding': 'identity' } }),
    ).toThrow('headers["transfer-encoding"] is "identity"');
    expect(() => reply.text('hi', { headers: { 'content-length': '3' } })).toThrow(
      'reply.text(): headers["content-length"] is "3", but the text body is 2 bytes',
    );
    // The wire answer's bytes are what the client gets: a declared length longer than the body.
    api.enqueue(reply.wire('HTTP/1.1 200 OK\r\ncontent-length: 999\r\n\r\nab'));
    const got = await curl(['-i', `${api.url}/wire`]);
    expect(got.code).toBe(18);
    expect(api.requests()).toHaveLength(1);
    expect(api.requests()[0]?.response).toMatchObject({ status: 200, endedBy: 'complete' });
  });
});

describe('retryable responses (HT-16)', () => {
  it('HT-16 a client that leaves during delayMs gives a retryable response back: its retry gets it; the aborted entry says client-abort and requeued', async () => {
    const api = await server({ strict: true });
    api.enqueue([{ text: 'first', delayMs: 1000, retryable: true }, { text: 'second' }]);
    const e = api.expect({ path: '/e' }, { text: 'expected', delayMs: 1000, retryable: true });
    expect(await get(api, '/f', () => api.requests().length === 1)).toBeNull();
    await expect.poll(() => api.requests()[0]?.response.endedBy).toBe('client-abort');
    expect(api.requests()[0]).toMatchObject({
      claimedBy: 'fifo#1',
      response: { status: undefined, requeued: true },
    });
    expect(await get(api, '/f')).toBe('first');
    expect(await get(api, '/f')).toBe('second');
    expect(await get(api, '/e', () => api.requests().length === 4)).toBeNull();
    await expect.poll(() => api.requests()[3]?.response.requeued).toBe(true);
    expect(e.used).toBe(0);
    expect(await get(api, '/e')).toBe('expected');
    expect(e.used).toBe(1);
    expect(api.requests().map((r) => [r.claimedBy, r.response.endedBy])).toEqual([
      ['fifo#1', 'client-abort'],
      ['fifo#1', 'complete'],
      ['fifo#2', 'complete'],
      ['expect#1', 'client-abort'],
      ['expect#1', 'complete'],
    ]);
    api.assertDone();
  });

  it('HT-16 a client that leaves mid-stream gives a retryable stream back; one written whole is used (exactly once); without retryable the retry takes the next', async () => {
    const api = await server();
    api.enqueue([
      { ...sse.chat(['a', 'b', 'c']), eventDelayMs: 300, retryable: true },
      { text: 'next', retryable: true },
      { text: 'last', delayMs: 1000 },
      { text: 'after last' },
    ]);
    expect(await get(api, '/s', (got) => got.includes('data: '))).toBeNull();
    await expect.poll(() => api.requests()[0]?.response.requeued).toBe(true);
    const whole = await get(api, '/s');
    expect(whole).toContain('data: [DONE]');
    // Written whole: the next request takes the next response, even with retryable.
    expect(await get(api, '/n')).toBe('next');
    // Not retryable: the client that leaves used it; its retry takes the one after.
    expect(await get(api, '/x', () => api.requests().length === 4)).toBeNull();
    await expect.poll(() => api.requests()[3]?.response.endedBy).toBe('client-abort');
    expect(api.requests()[3]?.response.requeued).toBeUndefined();
    expect(await get(api, '/x')).toBe('after last');
    expect(api.requests().map((r) => r.claimedBy)).toEqual([
      'fifo#1',
      'fifo#1',
      'fifo#2',
      'fifo#3',
      'fifo#4',
    ]);
  });

  it('HT-16 a client that leaves a big retryable body mid-write (progress counters pending) gives it back: the entry says requeued, assertDone() reports it unused, the retry gets it whole', async () => {
    const api = await server();
    const piece = 'y'.repeat(8000);
    api.expect(
      { path: '/big' },
      { chunks: Array.from({ length: 400 }, () => ({ text: piece })), retryable: true },
    );
    const { port } = new URL(api.url);
    await new Promise<void>((resolve) => {
      const socket = connect(Number(port), '127.0.0.1', () =>
        socket.write('GET /big HTTP/1.1\r\nhost: a\r\n\r\n'),
      );
      let got = 0;
      socket.on('data', (d: Buffer) => {
        got += d.length;
        if (got > 200_000) socket.destroy();
      });
      socket.on('error', () => {});
      socket.on('close', () => resolve());
    });
    await expect.poll(() => api.requests()[0]?.response.endedBy).toBe('client-abort');
    expect(api.requests()[0]?.response.requeued).toBe(true);
    expect(() => api.assertDone()).toThrow(/expect#1/);
    const whole = await get(api, '/big');
    expect(whole?.length).toBe(400 * piece.length);
    api.assertDone();
  });

  it('HT-16 HT-07 a client gone while its claim waited for a predicate is noticed: logged client-abort, a retryable response given back for its retry', async () => {
    const api = await server();
    api.expect({ path: '/p', predicate: () => true }, { text: 'p', retryable: true });
    // The test's thread is blocked while curl waits, then gives up: the predicate is answered only after.
    expect(() =>
      execFileSync('curl', ['-sS', '--noproxy', '*', '--max-time', '0.5', `${api.url}/p`], {
        stdio: 'ignore',
      }),
    ).toThrow();
    await expect.poll(() => api.requests()[0]?.response.endedBy).toBe('client-abort');
    expect(api.requests()[0]?.response.requeued).toBe(true);
    expect((await curl([`${api.url}/p`])).stdout.toString()).toBe('p');
    expect(api.requests().map((r) => r.claimedBy)).toEqual(['expect#1', 'expect#1']);
  });

  it('HT-16 retryable is checked like the other fields and passes through the builders', () => {
    expect(sse.chat('hi', { retryable: true }).retryable).toBe(true);
    expect(reply.status(503, { retryable: true }).retryable).toBe(true);
    expect(reply.wire('HTTP/1.1 200 OK\r\n\r\n', { retryable: true }).retryable).toBe(true);
    expect(() => reply.json({}, { retryable: 'yes' as never })).toThrow(
      'reply.json(): retryable must be true or false, got "yes" (string).',
    );
  });
});

describe('what the FIFO answers (HT-18)', () => {
  it('HT-18 HEAD and OPTIONS do not take FIFO responses: they go to unmatched, saying why; an expectation with method HEAD takes HEAD; the FIFO answers the real request', async () => {
    const api = await server();
    api.enqueue(reply.json({ ok: true }));
    const head = await curl(['-sS', '-I', `${api.url}/v1/models`]);
    expect(head.stdout.toString()).toMatch(/^HTTP\/1\.1 500 /);
    const options = await curl(['-X', 'OPTIONS', `${api.url}/v1/models`]);
    expect(JSON.parse(options.stdout.toString()).error.message).toBe(
      "shimkit: no scripted response for OPTIONS /v1/models (request #2). No expectation was set. The FIFO answers only GET, POST, PUT, PATCH and DELETE requests (the fifoMethods option of createMockServer()), and this is OPTIONS. To answer it: api.expect({ method: 'OPTIONS', path: '/v1/models' }, …).",
    );
    expect((await curl([`${api.url}/v1/models`])).stdout.toString()).toBe('{"ok":true}');
    api.expect({ method: 'HEAD', path: '/health' }, { status: 204 });
    expect((await curl(['-I', `${api.url}/health`])).stdout.toString()).toMatch(/^HTTP\/1\.1 204 /);
    expect(api.requests().map((r) => [r.method, r.claimedBy])).toEqual([
      ['HEAD', null],
      ['OPTIONS', null],
      ['GET', 'fifo#1'],
      ['HEAD', 'expect#1'],
    ]);
  });

  it("HT-18 fifoMethods: 'any' lets the FIFO answer every method, a list only those; bad values are refused naming the option", async () => {
    const any = await server({ fifoMethods: 'any' });
    any.enqueue({ text: 'for anyone' });
    expect((await curl(['-X', 'OPTIONS', `${any.url}/x`])).stdout.toString()).toBe('for anyone');
    const mine = await server({ fifoMethods: ['get', 'HEAD'] });
    mine.enqueue([{ text: 'a' }, { text: 'b' }]);
    expect((await curl(['-I', `${mine.url}/x`])).stdout.toString()).toMatch(/^HTTP\/1\.1 200 /);
    const post = await curl(['-X', 'POST', `${mine.url}/x`]);
    expect(JSON.parse(post.stdout.toString()).error.message).toContain(
      'The FIFO answers only GET and HEAD requests (the fifoMethods option of createMockServer()), and this is POST.',
    );
    expect((await curl([`${mine.url}/x`])).stdout.toString()).toBe('b');
    for (const bad of [[], 'GET', ['GET', 1], ['not a method']]) {
      await expect(server({ fifoMethods: bad as never })).rejects.toThrow(
        "Expected the `fifoMethods` option of createMockServer() to be 'any' or a non-empty list of method names such as ['GET', 'POST']",
      );
    }
  });
});

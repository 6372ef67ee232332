import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  createMockServer,
  InvalidOptionError,
  InvalidResponseError,
  reply,
  sse,
  WaitTimeoutError,
} from '../../src/index.js';
import { python3, runCommand, spawnTracked, testDir } from '../helpers/index.js';
import { Lines } from '../helpers/lines.js';
import { curl, server } from '../helpers/server.js';

// Regression tests for the serving findings of the hostile review
// (review-findings.test.ts has the reviewer's own): every client is a real
// one in its own process, and every wait is on a condition.

const STREAM = fileURLToPath(new URL('../fixtures/http-stream.mjs', import.meta.url));

/** Run a node script in its own process; its stdout. */
async function node(script: string, ...args: string[]): Promise<string> {
  const out = await runCommand(process.execPath, ['-e', script, ...args]);
  if (out.code !== 0) throw new Error(`node child failed: ${out.stderr.toString()}`);
  return out.stdout.toString();
}

/** Run a python script in its own process; its stdout, trimmed. */
async function python(script: string, env?: NodeJS.ProcessEnv): Promise<string> {
  const out = await runCommand(python3(), ['-c', script], env ? { env } : {});
  if (out.code !== 0) throw new Error(`python child failed: ${out.stderr.toString()}`);
  return out.stdout.toString().trim();
}

/**
 * A node child that sends `raw` on one connection and prints, as JSON,
 * everything it read until the server closed it (and the error, if any).
 */
const PIPELINE = `
const s = require('node:net').connect(Number(process.argv[1]), '127.0.0.1');
let got = ''; let error;
s.setEncoding('latin1');
s.on('data', (d) => { got += d; });
s.on('error', (e) => { error = e.code; });
s.on('close', () => { console.log(JSON.stringify({ got, error })); });
s.write(process.argv[2]);
setTimeout(() => s.destroy(), 8000).unref();
`;

/** Sequential requests on one keep-alive connection; one JSON line per answer. */
const KEEP_ALIVE = `
const http = require('node:http');
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const [base, ...steps] = process.argv.slice(1);
(async () => {
  for (const step of steps) {
    const [method, path] = step.split(' ');
    const line = await new Promise((resolve) => {
      const req = http.request(base + path, { method, agent }, (res) => {
        let body = '';
        res.setEncoding('latin1');
        res.on('data', (d) => { body += d; });
        res.on('end', () => resolve({ status: res.statusCode, body, reused: req.reusedSocket }));
        res.on('error', (e) => resolve({ error: e.message }));
      });
      req.on('error', (e) => resolve({ error: e.code || e.message }));
      req.end();
    });
    console.log(JSON.stringify(line));
  }
  agent.destroy();
})();
`;

function port(url: string): string {
  return new URL(url).port;
}

describe('serving (review findings)', () => {
  it('HT-06 release() refuses a replacement after the headers of a json body (InvalidOptionError saying why and what to do); release() then sends the body, and the keep-alive connection serves the next request', async () => {
    const api = await server();
    api.enqueue([reply.json({ ok: true }), reply.text('next')]);
    const held = api.hold({ path: '/h' }, { afterEvents: 0 });
    const out = node(KEEP_ALIVE, api.url, 'GET /h', 'GET /next');
    await held.waitBlocked();
    let thrown: unknown;
    try {
      held.release({ sse: [{ data: 'replacement event' }] });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidOptionError);
    expect((thrown as Error).message).toBe(
      "The response passed to release() of hold() #1 { path: '/h' } cannot be served: the hold is after the headers of the response to request #1, and its body is json, text or bodyBase64, and the headers already sent say content-length: 11, so nothing else can follow them (the client would read the replacement's bytes as that body). Call release() without a response to send the scripted body; to replace the whole response, hold it before the headers (hold() without afterEvents); to pause in the middle of a body, script it as chunks or sse.",
    );
    held.release();
    expect(
      (await out)
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { status: 200, body: '{"ok":true}', reused: false },
      { status: 200, body: 'next', reused: true },
    ]);
    expect(api.requests().map((r) => [r.response.endedBy, r.response.bytesSent, r.error])).toEqual([
      ['complete', 11, undefined],
      ['complete', 4, undefined],
    ]);
  });

  it('HT-06 a replacement for a hold after a json body is refused once the request came (before the pause), and one given before it came is not used: the scripted body goes and the entry says why', async () => {
    const api = await server();
    api.enqueue([reply.json({ n: 1 }, { delayMs: 300 }), reply.json({ n: 2 })]);
    const first = api.hold({ path: '/one' }, { afterEvents: 0 });
    const one = curl([`${api.url}/one`]);
    await first.waitReceived();
    expect(() => first.release({ chunks: [{ text: 'x' }] })).toThrow(
      /cannot be served: the hold is after the headers of the response to request #1, and its body is json/,
    );
    first.release();
    expect((await one).stdout.toString()).toBe('{"n":1}');

    const second = api.hold({ path: '/two' }, { afterEvents: 0 });
    second.release({ chunks: [{ text: 'never sent' }] }); // nothing is known yet: no throw
    const two = await curl(['-i', `${api.url}/two`]);
    expect(two.code).toBe(0);
    expect(two.stdout.toString()).toMatch(/content-length: 7\r\n[\s\S]*\r\n\r\n\{"n":2\}$/);
    expect(api.requests()[1]?.error).toBe(
      'shimkit: the response passed to release() of hold() #2 was not used for GET /two (request #2): the hold is after the headers and its body is json, text or bodyBase64, and the headers already sent say content-length: 7, so nothing else can follow them; the scripted body was sent. Release it without a response, or hold before the headers (no afterEvents) to replace the whole response.',
    );
  });

  it("HT-05 a pipelined second request's FIN cut comes in its turn: the first response on the connection completes, then the second's headers and 3 bytes, then the FIN; the log says what the client got", async () => {
    const api = await server();
    api.enqueue([
      sse.events([{ data: 'one' }, { data: 'two' }, { data: 'three' }], { eventDelayMs: 100 }),
      reply.json({ second: true }, { cut: { afterBytes: 3, how: 'fin' } }),
      reply.text('third, never sent'),
    ]);
    const { got } = JSON.parse(
      await node(
        PIPELINE,
        port(api.url),
        'GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\nGET /3 HTTP/1.1\r\nHost: x\r\n\r\n',
      ),
    );
    const [head1, rest] = (got as string).split(
      /(?=HTTP\/1\.1 200 OK\r\ncontent-type: application\/json)/,
    );
    expect(head1).toContain('d\r\ndata: three\n\n\r\n0\r\n\r\n');
    expect(rest).toMatch(/content-length: 15\r\n/);
    expect(rest).toMatch(/\r\n\r\n\{"s$/);
    const [a, b] = api.requests();
    expect(
      [a, b].map((r) => [r?.response.endedBy, r?.response.bytesSent, r?.response.events]),
    ).toEqual([
      ['complete', 35, 3],
      ['cut', 3, 0],
    ]);
    // The second response started on the wire only after the first was finished.
    expect(b?.response.startedAt).toBeGreaterThanOrEqual(a?.response.endedAt as number);
    // The third, behind the cut one, never went out: the server's doing, not the client's.
    const third = api.requests()[2];
    expect(third?.response).toMatchObject({ status: undefined, bytesSent: 0, endedBy: 'cut' });
    expect(third?.error).toBe(
      'shimkit: the server closed the connection after the response to GET /2 (request #2) (its cut, reset, wireBase64 answer or connection: close), before the response to GET /3 (request #3), pipelined behind it, was sent.',
    );
  });

  it("HT-05 a pipelined second request's resetBeforeHeaders resets the connection only after the first response completed", async () => {
    const api = await server();
    api.enqueue([
      sse.events([{ data: 'one' }, { data: 'two' }], { eventDelayMs: 150 }),
      reply.json({ never: 'sent' }, { resetBeforeHeaders: true }),
    ]);
    const { got, error } = JSON.parse(
      await node(
        PIPELINE,
        port(api.url),
        'GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n',
      ),
    );
    expect(got).toMatch(/b\r\ndata: two\n\n\r\n0\r\n\r\n$/);
    expect(got.match(/HTTP\/1\.1/g)).toHaveLength(1);
    expect(error).toBe('ECONNRESET');
    expect(api.requests().map((r) => [r.response.endedBy, r.response.bytesSent])).toEqual([
      ['complete', 22],
      ['cut', 0],
    ]);
  });

  it('HT-07 a client that leaves while its pipelined second request waits behind the first: both are client-abort right after execFileSync, the second with nothing sent', async () => {
    const api = await server();
    api.enqueue([sse.events([{ data: 'a' }, { data: 'b' }]), reply.json({ queued: true })]);
    api.hold({ path: '/1' }, { afterEvents: 1 });
    const script = `
const s = require('node:net').connect(Number(process.argv[1]), '127.0.0.1');
let got = '';
s.on('data', (d) => { got += d; if (got.includes('data: a')) process.exit(0); });
s.write('GET /1 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\nGET /2 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n');
`;
    execFileSync(process.execPath, ['-e', script, port(api.url)]);
    expect(api.requests().map((r) => r.response)).toMatchObject([
      { status: 200, endedBy: 'client-abort', events: 1 },
      { status: undefined, endedBy: 'client-abort', events: 0, bytesSent: 0 },
    ]);
  });

  it('HT-12 a 413 reaches a client that sends its whole body before it reads (100 MiB through python urllib); the refused body is read and dropped, not kept', async () => {
    const api = await server({ bodyLimitBytes: 1000 });
    const script = [
      'import urllib.request',
      'try:',
      `    urllib.request.urlopen(urllib.request.Request("${api.url}/up", data=b"x"*(100*1024*1024), method="POST"))`,
      '    print("no error")',
      'except urllib.error.HTTPError as e: print("HTTP", e.code, e.headers["connection"])',
      'except Exception as e: print("EXC", type(e).__name__, e)',
    ].join('\n');
    const before = process.memoryUsage().rss;
    expect(await python(script, api.env())).toBe('HTTP 413 close');
    expect(process.memoryUsage().rss - before).toBeLessThan(48 * 1024 * 1024);
    expect(api.requests()[0]).toMatchObject({
      path: '/up',
      bodyBytes: 100 * 1024 * 1024,
      response: { status: 413, endedBy: 'complete' },
    });
    // curl stops sending once it has the 413 and closes mid-body: that is no second request.
    const file = join(testDir(), 'body.bin');
    writeFileSync(file, Buffer.alloc(5 * 1024 * 1024, 'z'));
    const out = await curl([
      '-o',
      '/dev/null',
      '-w',
      '%{http_code}',
      '--data-binary',
      `@${file}`,
      `${api.url}/c`,
    ]);
    expect(out.stdout.toString()).toBe('413');
    expect(api.requests().map((r) => [r.path, r.response.status, r.response.endedBy])).toEqual([
      ['/up', 413, 'complete'],
      ['/c', 413, 'complete'],
    ]);
  });

  it('HT-12 a client that stops sending a refused body has the 413, and the connection closes after about a second, not never', async () => {
    const api = await server({ bodyLimitBytes: 100 });
    const script = `
const s = require('node:net').connect(Number(process.argv[1]), '127.0.0.1');
let got = ''; const started = Date.now();
s.setEncoding('latin1');
s.on('data', (d) => { got += d; });
s.on('error', () => {});
s.on('close', () => console.log(JSON.stringify({ status: got.slice(0, 12), ms: Date.now() - started })));
s.write('POST /up HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 10000000\\r\\n\\r\\n' + 'x'.repeat(5000));
`;
    const { status, ms } = JSON.parse(await node(script, port(api.url)));
    expect(status).toBe('HTTP/1.1 413');
    expect(ms).toBeGreaterThanOrEqual(900);
    expect(ms).toBeLessThan(5000);
  });

  it('HT-02 a 1xx status is refused (InvalidResponseError; reply.status: InvalidOptionError), since the client would wait for a final answer; wireBase64 still sends one: curl reads 103 Early Hints, then the 200', async () => {
    const api = await server();
    for (const status of [100, 101, 103, 199]) {
      expect(() => api.enqueue({ status })).toThrow(InvalidResponseError);
    }
    expect(() => api.enqueue({ status: 101, text: 'upgrade?' })).toThrow(
      'the response passed to enqueue() #1: status must be an integer from 200 to 999, got 101: a 1xx status (100 Continue, 101 Switching Protocols, 103 Early Hints …) is informational, not an answer, so the client would wait for the final response that never comes. To send such bytes on purpose, give the whole answer as wireBase64 (reply.wire()).',
    );
    expect(() => reply.status(100)).toThrow(InvalidOptionError);
    expect(() => reply.status(100)).toThrow(/A 1xx status is informational/);
    api.enqueue(
      reply.wire(
        'HTTP/1.1 103 Early Hints\r\nlink: </a.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok',
      ),
    );
    const out = await curl(['-i', `${api.url}/early`]);
    expect(out.code).toBe(0);
    expect(out.stdout.toString()).toMatch(
      /^HTTP\/1\.1 103 Early Hints\r\n[\s\S]*HTTP\/1\.1 200 OK\r\n[\s\S]*ok$/,
    );
  });

  it('HT-05 cut.afterBytes 0 on a text body: python http.client reads the status and headers, then IncompleteRead with 0 bytes; an rst cut at 0 after a bodyBase64 gives curl the headers, then 56', async () => {
    const api = await server();
    api.enqueue([
      reply.text('0123456789', { cut: { afterBytes: 0, how: 'fin' } }),
      reply.raw('abcdef', { cut: { afterBytes: 0, how: 'rst' } }),
    ]);
    const script = [
      'import http.client',
      `c = http.client.HTTPConnection("127.0.0.1", ${port(api.url)})`,
      'c.request("GET", "/t")',
      'r = c.getresponse()',
      'print(r.status, r.getheader("content-length"))',
      'try: r.read(); print("read all")',
      'except http.client.IncompleteRead as e: print("incomplete", len(e.partial), e.expected)',
    ].join('\n');
    expect(await python(script)).toBe('200 10\nincomplete 0 10');
    const rst = await curl(['-i', `${api.url}/r`]);
    expect(rst.code).toBe(56);
    expect(rst.stdout.toString()).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*content-length: 6\r\n/);
    expect(
      api.requests().map((r) => [r.response.status, r.response.endedBy, r.response.bytesSent]),
    ).toEqual([
      [200, 'cut', 0],
      [200, 'cut', 0],
    ]);
  });

  it('HT-07 a client that leaves during a 32 MiB text body is client-abort right after execFileSync returns, with the bytes written so far, not the whole body', async () => {
    const api = await server();
    const size = 32 * 1024 * 1024;
    api.enqueue(reply.text('y'.repeat(size)));
    const script = [
      'import socket, os',
      `s = socket.create_connection(("127.0.0.1", ${port(api.url)}))`,
      's.sendall(b"GET /big HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")',
      'n = 0',
      'while n < 1024 * 1024: n += len(s.recv(65536))',
      'os._exit(0)',
    ].join('\n');
    execFileSync(python3(), ['-c', script]);
    const response = api.requests()[0]?.response;
    expect(response?.endedBy).toBe('client-abort');
    expect(response?.bytesSent).toBeGreaterThan(512 * 1024);
    expect(response?.bytesSent).toBeLessThan(size);
    expect(response?.endedAt).toBeDefined();
  });

  it('HT-07 HEAD on an SSE response, a 204 and a 304 send no body and log none (bytesSent 0, events 0); the keep-alive connection then serves a GET', async () => {
    const api = await server();
    // A HEAD takes an expectation for HEAD, not a FIFO response (HT-18).
    api.expect({ method: 'HEAD' }, sse.events([{ data: 'a' }, { data: 'b' }, { data: 'c' }]));
    api.enqueue([
      { status: 204, json: { ignored: true } },
      { status: 304, text: 'stale' },
      reply.text('after'),
    ]);
    const lines = (
      await node(KEEP_ALIVE, api.url, 'HEAD /sse', 'GET /204', 'GET /304', 'GET /after')
    )
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      { status: 200, body: '', reused: false },
      { status: 204, body: '', reused: true },
      { status: 304, body: '', reused: true },
      { status: 200, body: 'after', reused: true },
    ]);
    expect(
      api
        .requests()
        .map((r) => [
          r.method,
          r.response.status,
          r.response.bytesSent,
          r.response.events,
          r.response.endedBy,
        ]),
    ).toEqual([
      ['HEAD', 200, 0, 0, 'complete'],
      ['GET', 204, 0, 0, 'complete'],
      ['GET', 304, 0, 0, 'complete'],
      ['GET', 200, 5, 0, 'complete'],
    ]);
  });

  it('HT-07 requests() right after spawnSync shows a node client that left mid-stream as client-abort, every time; while a response is held it still returns at once', async () => {
    const api = await server();
    const script = `
const s = require('node:net').connect(Number(process.argv[1]), '127.0.0.1');
let got = '';
s.on('data', (d) => { got += d; if (got.includes('data: a')) process.exit(0); });
s.write('GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n');
`;
    const seen: Array<string | undefined> = [];
    for (let i = 0; i < 20; i++) {
      api.reset();
      api.enqueue(sse.events([{ data: 'a' }, { data: 'b' }], { eventDelayMs: 500 }));
      spawnSync(process.execPath, ['-e', script, port(api.url)]);
      seen.push(api.requests()[0]?.response.endedBy);
    }
    expect(seen).toEqual(Array(20).fill('client-abort'));

    api.reset();
    api.enqueue(reply.text('held'));
    const held = api.hold();
    const c = curl([`${api.url}/held`]);
    await held.waitBlocked();
    const started = performance.now();
    expect(api.requests()[0]?.response.endedBy).toBeUndefined();
    api.lastRequest();
    expect(performance.now() - started).toBeLessThan(1000);
    held.release();
    expect((await c).stdout.toString()).toBe('held');
  });

  it('HT-06 dispose() while a stream waits between events logs it cut, with an error naming dispose(), not client-abort', async () => {
    const api = await createMockServer();
    api.enqueue(sse.events([{ data: 'a' }, { data: 'b' }], { eventDelayMs: 10_000 }));
    const child = spawnTracked(process.execPath, [STREAM, `${api.url}/s`]);
    const lines = new Lines(child);
    expect(JSON.parse(await lines.next())).toEqual({ status: 200 });
    expect(JSON.parse(await lines.next())).toEqual({ chunk: 'data: a\n\n' });
    await api.dispose();
    const entry = api.requests()[0];
    expect(entry?.response).toMatchObject({ endedBy: 'cut', events: 1 });
    expect(entry?.error).toBe(
      'shimkit: dispose() closed the connection of GET /s (request #1), before its response was finished.',
    );
  });

  it('HT-06 waitBlocked() rejects at once when the response ends before its hold point: a cut before it, resetBeforeHeaders, a wireBase64 answer', async () => {
    const api = await server();
    api.enqueue([
      sse.events([{ data: 'a' }, { data: 'b' }, { data: 'c' }, { data: 'd' }], {
        cut: { afterEvents: 1, how: 'fin' },
      }),
      reply.json({ x: 1 }, { resetBeforeHeaders: true }),
      reply.wire('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'),
    ]);
    const cases: Array<[string, RegExp]> = [
      [
        '/cut',
        /request #1 ended \(cut\) before it reached the hold point \(after event 3\), so it will never pause: a cut or resetBeforeHeaders ended it first\.$/,
      ],
      ['/reset', /request #2 ended \(cut\) before it reached the hold point \(after event 0\)/],
      [
        '/wire',
        /request #3 ended \(complete\) before it reached the hold point \(after event 0\), so it will never pause: a wireBase64 answer is written whole, without a hold point\.$/,
      ],
    ];
    for (const [path, message] of cases) {
      const held = api.hold({ path }, { afterEvents: path === '/cut' ? 3 : 0 });
      const waiting = held.waitBlocked({ timeoutMs: 4000 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      const started = performance.now();
      await curl([`${api.url}${path}`]);
      const error = await waiting;
      expect(error).toBeInstanceOf(WaitTimeoutError);
      expect((error as Error).message).toMatch(message);
      expect(performance.now() - started).toBeLessThan(3000); // not the 4 s timeout
    }
    api.enqueue(reply.text('straight through'));
    const early = api.hold({ path: '/early' });
    early.release();
    await curl([`${api.url}/early`]);
    await expect(early.waitBlocked()).rejects.toThrow(
      /request #4 ended \(complete\) before it reached the hold point \(before the headers\), so it will never pause: release\(\) came before it got there, so it passed without pausing\.$/,
    );
  });

  it('HT-08 reply.status({ retryAfter: 1.5 }) sends retry-after: 2 (whole seconds, as the header takes them) and retry-after-ms: 1500', async () => {
    const api = await server();
    api.enqueue([reply.status(429, { retryAfter: 1.5 }), reply.status(503, { retryAfter: 0.2 })]);
    const a = (await curl(['-i', `${api.url}/a`])).stdout.toString();
    expect(a).toMatch(/\r\nretry-after: 2\r\n/);
    expect(a).toMatch(/\r\nretry-after-ms: 1500\r\n/);
    const b = (await curl(['-i', `${api.url}/b`])).stdout.toString();
    expect(b).toMatch(/\r\nretry-after: 1\r\n/);
    expect(b).toMatch(/\r\nretry-after-ms: 200\r\n/);
  });

  it('HT-05 resetBeforeHeaders is refused on a Unix socket, as an rst cut is (a Unix socket has no reset: it would be a plain close), also in release()', async () => {
    const path = join(testDir(), 's.sock');
    const api = await createMockServer({ listen: { path } });
    try {
      expect(() => api.enqueue({ text: 'x', resetBeforeHeaders: true })).toThrow(
        `the response passed to enqueue() #1: resetBeforeHeaders needs a TCP connection (a Unix socket has no reset: the client would see a plain close, not ECONNRESET), and this server listens on the Unix socket ${path}. Use wireBase64 '' (reply.wire('')) for an empty reply, or listen on TCP (the default).`,
      );
      expect(() => api.expect({}, reply.json({}, { resetBeforeHeaders: true }))).toThrow(
        InvalidResponseError,
      );
      api.enqueue(reply.text('plain'));
      const held = api.hold();
      const out = runCommand('curl', ['-sS', '--unix-socket', path, 'http://localhost/x']);
      await held.waitBlocked();
      expect(() => held.release({ resetBeforeHeaders: true })).toThrow(InvalidResponseError);
      held.release();
      expect((await out).stdout.toString()).toBe('plain');
    } finally {
      await api.dispose();
    }
  });
});

import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createMockServer,
  DisposedError,
  InvalidOptionError,
  InvalidResponseError,
  type MockServer,
  ServerWorkerError,
} from '../../src/index.js';
import { crashServerWorker } from '../../src/server/mock-server.js';
import { spawnTracked, testDir } from '../helpers/index.js';
import { Lines } from '../helpers/lines.js';
import { curl, server, settled } from '../helpers/server.js';

/** Write `bytes` on a raw TCP connection to the server and collect what comes back until it closes. */
function raw(
  api: MockServer,
  bytes: string | Buffer,
  options: { end?: boolean } = {},
): Promise<string> {
  const { port } = new URL(api.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
    socket.write(bytes);
    if (options.end) socket.end();
  });
}

describe('bad input (HT-12)', () => {
  it('HT-12 malformed HTTP gets a 400 and a log entry that says what was wrong', async () => {
    const api = await server();
    const answer = await raw(api, 'GARBAGE nonsense\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(answer).toContain('x-should-retry: false');
    const header = await raw(api, 'GET / HTTP/1.1\r\nHost: x\r\nbad header line\r\n\r\n');
    expect(header).toMatch(/^HTTP\/1\.1 400 /);
    const [first, second] = api.requests();
    expect(first).toMatchObject({
      seq: 1,
      method: '',
      claimedBy: null,
      response: { status: 400, endedBy: 'complete' },
    });
    expect(first?.error).toMatch(
      /^shimkit: request #1 is not well-formed HTTP \(HPE_INVALID_METHOD: .+\); answered 400\.$/,
    );
    expect(first?.body.toString()).toContain('GARBAGE');
    expect(second?.error).toMatch(/HPE_INVALID_HEADER_TOKEN/);
    expect(JSON.parse(answer.split('\r\n\r\n')[1] as string).error.message).toBe(first?.error);
  });

  it('HT-12 a body over the limit (64 MiB by default) gets a 413 at once, by its content-length, before it is sent', async () => {
    const api = await server();
    api.enqueue({ text: 'unused' });
    const answer = await raw(
      api,
      'POST /v1/big HTTP/1.1\r\nHost: x\r\nContent-Length: 67108865\r\n\r\n',
    );
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer.toLowerCase()).toContain('connection: close');
    expect(api.requests()[0]).toMatchObject({
      path: '/v1/big',
      claimedBy: null,
      bodyBytes: 67_108_865,
      error:
        'shimkit: the body of POST /v1/big (request #1) has 67108865 bytes, over the limit of 67108864 (the bodyLimitBytes option of createMockServer()); answered 413.',
      response: { status: 413 },
    });
    expect(api.requests()[0]?.body.length).toBe(0);
  });

  it('HT-12 a chunked body is counted as it comes and refused at the limit; Expect: 100-continue is refused before the body', async () => {
    const api = await server({ bodyLimitBytes: 1000, logBodyBytes: 100 });
    const file = join(testDir(), 'body.bin');
    writeFileSync(file, Buffer.alloc(5000, 'z'));
    const chunked = await curl([
      '-i',
      '-H',
      'Transfer-Encoding: chunked',
      '--data-binary',
      `@${file}`,
      `${api.url}/c`,
    ]);
    expect(chunked.stdout.toString()).toMatch(/^HTTP\/1\.1 413 /);
    const expecting = await curl([
      '-i',
      '-H',
      'Expect: 100-continue',
      '--data-binary',
      `@${file}`,
      `${api.url}/e`,
    ]);
    expect(expecting.stdout.toString()).toMatch(/^HTTP\/1\.1 413 /);
    expect(expecting.stdout.toString()).not.toContain('100 Continue');
    const [c, e] = api.requests();
    expect(c?.bodyBytes).toBeGreaterThan(1000);
    expect(c?.body.toString()).toBe('z'.repeat(100));
    expect(e).toMatchObject({ bodyBytes: 5000, response: { status: 413 } });
  });

  it('HT-12 a client that never reads a 32 MiB stream holds socket buffers, not the body: bytes written stop growing', async () => {
    const api = await server();
    const piece = `data: ${'x'.repeat(64 * 1024 - 8)}\n\n`;
    api.enqueue({ sse: Array.from({ length: 512 }, () => ({ data: piece.slice(6, -2) })) });
    const reader = spawnTracked(process.execPath, [
      '-e',
      `const s = require('node:net').connect(Number(process.argv[1]), '127.0.0.1', () => {
         s.write('GET /big HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n');
         s.pause();
         console.log('paused');
         process.stdin.once('data', () => { let n = 0; s.on('data', (c) => { n += c.length; }); s.on('end', () => { console.log(n); process.exit(0); }); s.resume(); });
       });`,
      new URL(api.url).port,
    ]);
    const lines = new Lines(reader);
    expect(await lines.next()).toBe('paused');
    await api.waitForRequests(1);
    const entry = api.requests()[0];
    const rssBefore = process.memoryUsage().rss;
    const stuck = await settled(() => api.requests()[0]?.response.bytesSent ?? 0);
    const total = piece.length * 512;
    expect(stuck).toBeGreaterThan(0);
    expect(stuck).toBeLessThan(16 * 1024 * 1024);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(32 * 1024 * 1024);
    expect(entry?.response.endedBy).toBeUndefined();
    reader.stdin?.write('read now\n');
    const received = Number(await lines.next(20_000));
    expect(received).toBeGreaterThan(total);
    expect(entry?.response).toMatchObject({ bytesSent: total, events: 512, endedBy: 'complete' });
    console.log(
      `HT-12 stalled reader: ${stuck} of ${total} bytes written before backpressure held the writer`,
    );
  });

  it('HT-12 abusive clients (closing early, half bodies, aborting mid-stream) never throw into the test; the server goes on serving', async () => {
    const api = await server();
    api.expect(
      { path: '/stream' },
      { sse: [{ data: 'a' }, { data: 'b' }], eventDelayMs: 200 },
      { times: 'always' },
    );
    api.expect({ path: '/ok' }, { text: 'still serving' });
    const { port } = new URL(api.url);
    const abuse = [
      () => connect(Number(port), '127.0.0.1').end(),
      () =>
        connect(Number(port), '127.0.0.1', function (this: ReturnType<typeof connect>) {
          this.write('POST /half HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly a part');
          this.resetAndDestroy();
        }),
      () =>
        connect(Number(port), '127.0.0.1', function (this: ReturnType<typeof connect>) {
          this.write('GET /stream HTTP/1.1\r\nHost: x\r\n\r\n');
          this.once('data', () => this.resetAndDestroy());
        }),
      () =>
        connect(Number(port), '127.0.0.1', function (this: ReturnType<typeof connect>) {
          this.write('GET /par');
          this.destroy();
        }),
    ];
    for (const run of abuse) run().on('error', () => {});
    await expect
      .poll(() => api.requests().find((r) => r.path === '/stream')?.response.endedBy)
      .toBe('client-abort');
    expect((await curl([`${api.url}/ok`])).stdout.toString()).toBe('still serving');
    // A request cut short by its client inside its body is logged as what came
    // (HT-07); one cut inside its request line is not logged at all.
    await expect
      .poll(() => api.requests().find((r) => r.path === '/half')?.error)
      .toMatch(
        /^shimkit: the client closed its connection in the middle of the body of POST \/half \(request #\d\), after 11 of the 100 bytes its content-length declared; nothing was claimed or answered\.$/,
      );
    const log = api.requests();
    expect(log.map((r) => r.path).sort()).toEqual(['/half', '/ok', '/stream']);
    expect(log.find((r) => r.path === '/half')?.response).toMatchObject({
      status: undefined,
      endedBy: 'client-abort',
    });
  });

  it('HT-12 bad options are InvalidOptionError naming the option, the value and what it takes', async () => {
    const missingCassette = join(testDir(), 'x.json'); // its own dir: a /tmp/x.json of anyone's must not matter
    const bad: Array<[unknown, RegExp]> = [
      [
        { stirct: true },
        /Unknown option `stirct` for createMockServer\(\)\. Did you mean `strict`\?/,
      ],
      [
        { strict: 'yes' },
        /`strict` option of createMockServer\(\) to be true or false, got "yes" \(string\)/,
      ],
      [
        { unmatched: 'ignore' },
        /`unmatched` option of createMockServer\(\) to be "fail", "echo" or a function/,
      ],
      [{ listen: { path: 'relative.sock' } }, /absolute socket path/],
      [{ listen: { port: 70000 } }, /`listen.port` option .* 0 to 65535/],
      [{ listen: { host: '127.0.0.1', prot: 1 } }, /Unknown option `prot`/],
      [
        { timeoutMs: 0 },
        /`timeoutMs` option of createMockServer\(\) to be a positive integer of milliseconds/,
      ],
      [{ bodyLimitBytes: -1 }, /`bodyLimitBytes` option .* an integer of bytes from 1/],
      [{ logBodyBytes: 1.5 }, /`logBodyBytes` option .* an integer of bytes from 0/],
      [{ env: { OK: 1 } }, /`env.OK` option of createMockServer\(\) to be a string or null/],
      [{ cassette: missingCassette }, /the cassette \S+\/x\.json has no `upstream` to record from/],
    ];
    for (const [options, message] of bad) {
      const error = await createMockServer(options as never).catch((e: unknown) => e);
      expect(error, JSON.stringify(options)).toBeInstanceOf(InvalidOptionError);
      expect((error as Error).message).toMatch(message);
    }
    const api = await server();
    expect(() => api.expect({ pth: '/x' } as never, { text: '' })).toThrow(
      /Unknown key `pth` in the match of expect\(\) #1\. Did you mean `path`\?/,
    );
    expect(() => api.expect({ path: 'x' }, { text: '' })).toThrow(
      /`path` in the match of expect\(\) #1 to be a path starting with "\/"/,
    );
    expect(() => api.expect({}, { text: '' }, { times: 0 })).toThrow(
      /`times` option of expect\(\) #1/,
    );
    expect(() => api.enqueue([{ text: 'ok' }, { txt: 'typo' } as never])).toThrow(
      InvalidResponseError,
    );
    expect(() => api.enqueue([{ text: 'ok' }, { txt: 'typo' } as never])).toThrow(/enqueue\(\) #2/);
    expect(api.requests()).toEqual([]);
    expect(() => api.hold({}, { afterEvents: -1 })).toThrow(/`afterEvents` option of hold\(\) #1/);
    expect(() => api.hold({ predicate: () => true })).toThrow(/without a predicate/);
    expect(() => api.waitForRequests(1, { timeoutMs: -5 })).toThrow(InvalidOptionError);
  });

  it('HT-12 a worker that dies never throws into the test: the next call throws a ServerWorkerError, dispose() still cleans up', async () => {
    const api = await createMockServer();
    const pending = api.waitForRequests(1);
    crashServerWorker(api);
    await expect(pending).rejects.toThrow(ServerWorkerError);
    expect(() => api.requests()).toThrow(ServerWorkerError);
    expect(() => api.requests()).toThrow(
      /worker thread failed: shimkit: the crash a test asked for/,
    );
    await api.dispose();
    expect(() => api.enqueue({ text: '' })).toThrow(DisposedError);
  });
});

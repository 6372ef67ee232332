import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createMockServer, MockServerListenError } from '../../src/index.js';
import { python3, runCommand, testDir } from '../helpers/index.js';
import { curl, postJson, server } from '../helpers/server.js';

const PY_CLIENT = fileURLToPath(new URL('../fixtures/http_client.py', import.meta.url));

describe('createMockServer: reachable from any process (HT-01)', () => {
  it('HT-01 listens on 127.0.0.1 and a free port by default; curl in another process gets the scripted answer', async () => {
    const api = await server();
    expect(api.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(api.url).not.toMatch(/:0$/);
    expect(api.socketPath).toBeUndefined();
    api.enqueue({ json: { hello: 'world' } });
    const out = await curl(['-i', `${api.url}/v1/models`]);
    expect(out.code).toBe(0);
    const text = out.stdout.toString();
    expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(text).toContain('content-type: application/json');
    expect(text.endsWith('\r\n\r\n{"hello":"world"}')).toBe(true);
  });

  it('HT-01 listens on a Unix socket path: curl --unix-socket reaches it, and the file is gone after dispose()', async () => {
    const path = join(testDir(), 'api.sock');
    const api = await createMockServer({ listen: { path } });
    try {
      expect(api.socketPath).toBe(path);
      expect(api.url).toBe('http://localhost');
      api.enqueue({ text: 'over a socket' });
      const out = await curl(['--unix-socket', path, `${api.url}/x`]);
      expect(out.stdout.toString()).toBe('over a socket');
      expect(api.requests()[0]).toMatchObject({ path: '/x', claimedBy: 'fifo#1' });
    } finally {
      await api.dispose();
    }
    expect(existsSync(path)).toBe(false);
  });

  it('HT-01 a port in use is a MockServerListenError naming the address and EADDRINUSE', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as { port: number };
    try {
      const error = await createMockServer({ listen: { port } }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MockServerListenError);
      expect(error).toMatchObject({
        code: 'ERR_SHIMKIT_SERVER_LISTEN',
        errno: 'EADDRINUSE',
        address: `127.0.0.1:${port}`,
      });
      expect((error as Error).message).toMatch(/port 0/);
    } finally {
      taken.close();
    }
  });

  it('HT-01 env() is a copy of process.env when called, with the SDK variables and loopback in NO_PROXY', async () => {
    const api = await server();
    process.env.SHIMKIT_HT01_LATE = 'seen';
    try {
      const env = api.env();
      expect(env.SHIMKIT_HT01_LATE).toBe('seen');
      expect(env).toMatchObject({
        OPENAI_BASE_URL: `${api.url}/v1`,
        ANTHROPIC_BASE_URL: api.url,
        OPENAI_API_KEY: 'shimkit-test',
        ANTHROPIC_API_KEY: 'shimkit-test',
      });
      expect(env.NO_PROXY?.split(',')).toEqual(expect.arrayContaining(['127.0.0.1', 'localhost']));
      expect(env.no_proxy?.split(',')).toEqual(expect.arrayContaining(['127.0.0.1', 'localhost']));
      env.OPENAI_API_KEY = 'changed';
      expect(api.env().OPENAI_API_KEY).toBe('shimkit-test');
    } finally {
      delete process.env.SHIMKIT_HT01_LATE;
    }
    const base = { PATH: '/bin', NO_PROXY: 'example.com,localhost' };
    expect(api.env(base)).toEqual({
      PATH: '/bin',
      NO_PROXY: 'example.com,localhost,127.0.0.1,::1,[::1]',
      no_proxy: '127.0.0.1,localhost,::1,[::1]',
      OPENAI_BASE_URL: `${api.url}/v1`,
      ANTHROPIC_BASE_URL: api.url,
      OPENAI_API_KEY: 'shimkit-test',
      ANTHROPIC_API_KEY: 'shimkit-test',
    });
  });

  it("HT-01 env names are overridable: the env option adds ('{url}' substituted), changes and drops variables", async () => {
    const api = await server({
      env: { MY_API: '{url}/api', OPENAI_BASE_URL: '{url}/openai', ANTHROPIC_API_KEY: null },
    });
    const env = api.env({ ANTHROPIC_API_KEY: 'from-base' });
    expect(env.MY_API).toBe(`${api.url}/api`);
    expect(env.OPENAI_BASE_URL).toBe(`${api.url}/openai`);
    expect(env.ANTHROPIC_API_KEY).toBe('from-base');
    expect(api.env({}).ANTHROPIC_API_KEY).toBeUndefined();
  });

  it('HT-01 python urllib reaches it through env(), even with an http_proxy set (no_proxy covers loopback)', async () => {
    const api = await server();
    api.expect(
      { method: 'POST', path: '/v1/chat/completions' },
      { status: 201, json: { id: 'x' } },
    );
    const env = {
      ...api.env(),
      http_proxy: 'http://127.0.0.1:9',
      HTTP_PROXY: 'http://127.0.0.1:9',
    };
    const out = await runCommand(python3(), [PY_CLIENT, '/chat/completions', '{"model":"m"}'], {
      env,
    });
    expect(out.stderr.toString()).toBe('');
    const result = JSON.parse(out.stdout.toString());
    expect(result).toMatchObject({ status: 201, body: '{"id":"x"}' });
    expect(api.requests()).toHaveLength(1);
    expect(api.requests()[0]).toMatchObject({
      headers: { authorization: 'Bearer shimkit-test', 'content-type': 'application/json' },
      json: { model: 'm' },
      claimedBy: 'expect#1',
    });
  });

  it('HT-01 a node child reaches it with fetch() through env()', async () => {
    const api = await server();
    api.enqueue({ sse: [{ data: 'one' }, { data: 'two' }] });
    const script = `const r = await fetch(process.env.ANTHROPIC_BASE_URL + '/v1/messages', { method: 'POST', body: '{}' }); process.stdout.write(r.status + ' ' + r.headers.get('content-type') + ' ' + JSON.stringify(await r.text()));`;
    const out = await runCommand(process.execPath, ['--input-type=module', '-e', script], {
      env: api.env(),
    });
    expect(out.stdout.toString()).toBe(
      '200 text/event-stream; charset=utf-8 "data: one\\n\\ndata: two\\n\\n"',
    );
  });
});

describe('the request log (HT-07)', () => {
  it('HT-07 an entry has method, path, query, lower-case headers, the body capped with a counter, parsed JSON, timing, claimedBy and the response', async () => {
    const api = await server({ logBodyBytes: 10 });
    const before = Date.now();
    api.expect({ path: '/v1/a' }, { json: { ok: 1 } }, { name: 'small' });
    api.expect({ path: '/v1/big' }, { sse: [{ data: 'a' }, { data: 'b' }, { data: 'c' }] });
    await curl([...postJson(`${api.url}/v1/a?x=1&y=two&x=3`, { k: 1 }), '-H', 'X-Mixed-Case: Yes']);
    await curl([...postJson(`${api.url}/v1/big`, { padding: 'p'.repeat(100) })]);
    const [small, big] = api.requests();
    expect(small).toMatchObject({
      seq: 1,
      method: 'POST',
      path: '/v1/a',
      query: { x: '1,3', y: 'two' },
      headers: { 'x-mixed-case': 'Yes', 'content-type': 'application/json' },
      bodyBytes: 7,
      json: { k: 1 },
      claimedBy: 'small',
      error: undefined,
      response: { status: 200, bytesSent: 8, events: 0, endedBy: 'complete' },
    });
    expect(small?.body.toString()).toBe('{"k":1}');
    expect(small?.receivedAt).toBeGreaterThanOrEqual(before);
    expect(small?.response.startedAt).toBeGreaterThanOrEqual(small?.receivedAt as number);
    expect(big).toMatchObject({ seq: 2, claimedBy: 'expect#2', bodyBytes: 114, json: undefined });
    expect(big?.body.toString()).toBe('{"padding"');
    expect(big?.response).toMatchObject({
      status: 200,
      events: 3,
      bytesSent: 27,
      endedBy: 'complete',
    });
    expect(api.lastRequest()).toBe(big);
  });

  it('HT-07 a client that leaves mid-stream ends its entry client-abort', async () => {
    const api = await server();
    api.enqueue({ sse: [{ data: 'first' }, { data: 'late' }], eventDelayMs: 10_000 });
    const out = await curl(['-N', '--max-time', '1', `${api.url}/s`]);
    expect(out.code).toBe(28);
    expect(out.stdout.toString()).toBe('data: first\n\n');
    await api.waitForRequests(1);
    const entry = api.requests()[0];
    await expect.poll(() => entry?.response.endedBy).toBe('client-abort');
    expect(entry?.response).toMatchObject({ events: 1, bytesSent: 13 });
  });
});

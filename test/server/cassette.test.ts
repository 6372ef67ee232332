import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import {
  CASSETTE_MODE_VAR,
  createMockServer,
  InvalidOptionError,
  type MockServerResponse,
  type ServerCassette,
  UnusedResponsesError,
} from '../../src/index.js';
import { isSecretMember } from '../../src/server/redact.js';
import { completion, runCommand, spawnTracked, testDir } from '../helpers/index.js';
import { curl, postJson, server } from '../helpers/server.js';

const OPENAI_CHAT = fileURLToPath(new URL('../fixtures/openai-chat.mjs', import.meta.url));
const SSE_TIMES = fileURLToPath(new URL('../fixtures/sse-times.mjs', import.meta.url));
const HTTPS_RECORD = fileURLToPath(new URL('../fixtures/https-record.mjs', import.meta.url));

/** One chat-completion chunk as the OpenAI API streams it. */
function chunk(delta: object, finish: string | null = null): { data: object } {
  return {
    data: {
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1700000000,
      model: 'gpt-test',
      choices: [{ index: 0, delta, finish_reason: finish }],
    },
  };
}

/** A streamed chat completion of these pieces of text, ending in `data: [DONE]`. */
function chat(pieces: string[], options: Partial<MockServerResponse> = {}): MockServerResponse {
  return {
    sse: [
      chunk({ role: 'assistant', content: '' }),
      ...pieces.map((content) => chunk({ content })),
      chunk({}, 'stop'),
      { data: '[DONE]' },
    ],
    ...options,
  };
}

const CHAT = { method: 'POST', path: '/v1/chat/completions' };

function readCassette(path: string): ServerCassette {
  return JSON.parse(readFileSync(path, 'utf8')) as ServerCassette;
}

/** A TCP port nothing listens on (one that was free a moment ago). */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** Run the openai SDK program against `env`: its one JSON line. */
async function openaiChat(
  env: Record<string, string>,
  prompt: string,
): Promise<{ text?: string; status?: number; message?: string }> {
  const out = await runCommand(process.execPath, [OPENAI_CHAT, prompt], { env });
  expect(out.stderr.toString()).toBe('');
  return JSON.parse(out.stdout.toString());
}

/** curl -N POSTing a streamed chat completion request with this prompt. */
function curlChat(url: string, prompt: string) {
  const request = {
    model: 'gpt-test',
    messages: [{ role: 'user', content: prompt }],
    stream: true,
  };
  return curl(['-N', ...postJson(`${url}/v1/chat/completions`, request)]);
}

describe('cassettes: record and replay (HT-09)', () => {
  it('HT-09 record passes requests upstream and writes them at dispose(); a fresh replaying server gives curl and the openai SDK the same bytes, each interaction once, and fails an extra request naming the file', async () => {
    const path = join(testDir(), 'chat.cassette.json');
    const upstream = await server();
    upstream.expect({ ...CHAT, json: { messages: [{ content: 'one' }] } }, chat(['Hel', 'lo']));
    upstream.expect({ ...CHAT, json: { messages: [{ content: 'two' }] } }, chat(['Good', 'bye']));
    upstream.expect(
      { method: 'GET', path: '/v1/models' },
      { json: { data: [{ id: 'gpt-test' }] }, headers: { 'x-upstream': 'yes' } },
    );

    const rec = await server({ cassette: { path, mode: 'record', upstream: upstream.url } });
    const recorded = {
      sdk: await openaiChat(rec.env(), 'one'),
      curl: await curlChat(rec.url, 'two'),
      models: await curl(['-i', `${rec.url}/v1/models?limit=5`]),
    };
    expect(recorded.sdk).toEqual({ text: 'Hello' });
    expect(recorded.curl.code).toBe(0);
    expect(recorded.curl.stdout.toString()).toContain('"content":"Good"');
    expect(recorded.models.stdout.toString()).toContain('x-upstream: yes');
    expect(rec.requests().map((r) => r.claimedBy)).toEqual([
      'cassette:chat.cassette.json#1',
      'cassette:chat.cassette.json#2',
      'cassette:chat.cassette.json#3',
    ]);
    expect(rec.requests().map((r) => [r.response.status, r.response.endedBy, r.error])).toEqual([
      [200, 'complete', undefined],
      [200, 'complete', undefined],
      [200, 'complete', undefined],
    ]);
    expect(rec.requests()[1]?.response.events).toBe(5);
    expect(upstream.requests()).toHaveLength(3);
    expect(upstream.requests()[2]).toMatchObject({ path: '/v1/models', query: { limit: '5' } });
    expect(existsSync(path)).toBe(false);
    await rec.dispose();

    const file = readCassette(path);
    expect(file).toMatchObject({ version: 1, kind: 'http' });
    expect(file.interactions).toHaveLength(3);
    const [first, second, third] = file.interactions;
    expect(first?.request).toMatchObject({
      method: 'POST',
      path: '/v1/chat/completions',
      query: {},
      json: { model: 'gpt-test', stream: true },
    });
    expect(first?.response.status).toBe(200);
    expect(first?.response.sse?.map((e) => e.data)).toEqual(
      chat(['Hel', 'lo']).sse?.map((e) => e.data),
    );
    expect(first?.response.sse?.every((e) => typeof e.atMs === 'number' && e.atMs >= 0)).toBe(true);
    expect(first?.response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(first?.response.headers['transfer-encoding']).toBeUndefined();
    expect(second?.request.json).toMatchObject({ messages: [{ content: 'two' }] });
    expect(third?.request).toMatchObject({
      method: 'GET',
      path: '/v1/models',
      query: { limit: '5' },
      bodyBase64: '',
    });
    expect(Buffer.from(third?.response.bodyBase64 ?? '', 'base64').toString()).toBe(
      '{"data":[{"id":"gpt-test"}]}',
    );
    expect(third?.response.headers['x-upstream']).toBe('yes');
    expect(first?.durationMs).toBeGreaterThanOrEqual(0);

    await upstream.dispose();
    const play = await server({ cassette: { path, mode: 'replay' } });
    // In another order than recorded: each request finds its own interaction.
    const replayed = {
      curl: await curlChat(play.url, 'two'),
      models: await curl(['-i', `${play.url}/v1/models?limit=5`]),
      sdk: await openaiChat(play.env(), 'one'),
    };
    expect(replayed.sdk).toEqual(recorded.sdk);
    expect(replayed.curl.stdout.equals(recorded.curl.stdout)).toBe(true);
    const body = (out: Buffer) => out.toString().split('\r\n\r\n').slice(1).join('\r\n\r\n');
    expect(body(replayed.models.stdout)).toBe(body(recorded.models.stdout));
    expect(replayed.models.stdout.toString()).toContain('x-upstream: yes');
    expect(play.requests().map((r) => r.claimedBy)).toEqual([
      'cassette:chat.cassette.json#2',
      'cassette:chat.cassette.json#3',
      'cassette:chat.cassette.json#1',
    ]);
    expect(() => play.assertDone()).not.toThrow();

    // Each interaction answers once: the same request again, or another, is a 500 naming the file.
    const again = await curl(['-i', `${play.url}/v1/models?limit=5`]);
    const other = await curl(['-i', `${play.url}/v1/models?limit=6`]);
    for (const out of [again, other]) {
      const text = out.stdout.toString();
      expect(text).toMatch(/^HTTP\/1\.1 500 /);
      expect(text).toContain('x-should-retry: false');
      expect(text).toContain(`The cassette ${path} (replayed: 3 interactions`);
      expect(text).toContain("Closest: expectation 'cassette:chat.cassette.json#3'");
    }
    expect(again.stdout.toString()).toContain('it fits, but was used up (1 of 1 time)');
    expect(other.stdout.toString()).toContain('query.limit: recorded \\"5\\", got \\"6\\"');
    expect(play.requests()[4]).toMatchObject({
      claimedBy: null,
      error: expect.stringContaining(path),
    });
  });

  it('HT-09 redaction: auth headers, cookies, key-like headers and query values are kept as [redacted] in the file (none of the secrets is in it); the upstream got them, and a replay takes any value for them', async () => {
    const path = join(testDir(), 'secrets.json');
    const upstream = await server();
    upstream.enqueue({
      json: { ok: true },
      headers: {
        'set-cookie': ['session=SECRET-SETCOOKIE-1', 'theme=SECRET-SETCOOKIE-2'],
        'x-request-token': 'SECRET-RESPONSE-TOKEN',
        'x-plain': 'visible',
      },
    });
    const rec = await server({ cassette: { path, mode: 'record', upstream: upstream.url } });
    const headers: Record<string, string> = {
      authorization: 'Bearer SECRET-AUTHORIZATION',
      'proxy-authorization': 'Basic SECRET-PROXY-AUTHORIZATION',
      'x-api-key': 'SECRET-X-API-KEY',
      'api-key': 'SECRET-API-KEY',
      'x-goog-api-key': 'SECRET-GOOG',
      cookie: 'sid=SECRET-COOKIE',
      'x-session-id': 'SECRET-SESSION',
      'x-client-secret': 'SECRET-CLIENT-SECRET',
      'x-visible': 'kept',
    };
    const query = {
      key: 'SECRET-Q-KEY',
      code: 'SECRET-Q-CODE',
      sig: 'SECRET-Q-SIG',
      signature: 'SECRET-Q-SIGNATURE',
      token: 'SECRET-Q-TOKEN',
      access_token: 'SECRET-Q-ACCESS',
      api_key: 'SECRET-Q-APIKEY',
      Refresh_Token: 'SECRET-Q-REFRESH',
      page: '2',
    };
    const url = `${rec.url}/v1/things?${new URLSearchParams(query)}`;
    const args = Object.entries(headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]);
    const out = await curl([...args, url]);
    expect(out.stdout.toString()).toBe('{"ok":true}');
    expect(upstream.requests()[0]?.headers).toMatchObject({
      ...headers,
      host: new URL(upstream.url).host,
    });
    expect(upstream.requests()[0]?.query).toEqual(query);
    await rec.dispose();

    const text = readFileSync(path, 'utf8');
    for (const secret of text.match(/SECRET-[A-Z0-9-]+/g) ?? [])
      expect.fail(`${secret} is in the cassette`);
    const [interaction] = readCassette(path).interactions;
    for (const name of Object.keys(headers).filter((n) => n !== 'x-visible')) {
      expect(interaction?.request.headers[name], name).toBe('[redacted]');
    }
    expect(interaction?.request.headers['x-visible']).toBe('kept');
    expect(interaction?.request.query).toEqual({
      ...Object.fromEntries(Object.keys(query).map((k) => [k, '[redacted]'])),
      page: '2',
    });
    expect(interaction?.response.headers).toMatchObject({
      'set-cookie': ['[redacted]', '[redacted]'],
      'x-request-token': '[redacted]',
      'x-plain': 'visible',
    });

    const play = await server({ cassette: { path, mode: 'replay' } });
    const other = new URLSearchParams({ ...query, key: 'another-key', token: 'another-token' });
    expect((await curl([`${play.url}/v1/things?${other}`])).stdout.toString()).toBe('{"ok":true}');
    expect(play.requests()[0]?.claimedBy).toBe('cassette:secrets.json#1');
  });

  it("HT-09 recording through env() keeps the caller's API keys, so the upstream gets the real key and the recorded answer is its 200, not a 401; the file has the key redacted; a replay's env() and a recorder's without a key set get 'shimkit-test'", async () => {
    const path = join(testDir(), 'keys.json');
    const realKey = 'sk-REAL-KEY-123';
    const seen: string[] = [];
    const upstream = createHttpServer((req, res) => {
      seen.push(String(req.headers.authorization));
      req.resume();
      req.on('end', () => {
        if (req.headers.authorization !== `Bearer ${realKey}`) {
          res.writeHead(401, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: 'Incorrect API key provided' } }));
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const { data } of chat(['real ', 'answer']).sse ?? []) {
          res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
        }
        res.end();
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => {
      upstream.closeAllConnections();
      upstream.close();
    });
    const { port } = upstream.address() as { port: number };
    const upstreamUrl = `http://127.0.0.1:${port}`;

    const rec = await server({ cassette: { path, mode: 'record', upstream: upstreamUrl } });
    const base = { ...process.env, OPENAI_API_KEY: realKey, ANTHROPIC_API_KEY: 'sk-ant-REAL' };
    const env = rec.env(base);
    expect(env).toMatchObject({ OPENAI_API_KEY: realKey, ANTHROPIC_API_KEY: 'sk-ant-REAL' });
    expect(env.OPENAI_BASE_URL).toBe(`${rec.url}/v1`);
    expect(await openaiChat(env, 'hi')).toEqual({ text: 'real answer' });
    expect(seen).toEqual([`Bearer ${realKey}`]);
    // Without a key in the base, the placeholder (what the upstream refuses, as a real API would).
    const { OPENAI_API_KEY: _, ANTHROPIC_API_KEY: __, ...keyless } = base;
    expect(rec.env(keyless)).toMatchObject({
      OPENAI_API_KEY: 'shimkit-test',
      ANTHROPIC_API_KEY: 'shimkit-test',
    });
    expect(rec.env({ ...base, OPENAI_API_KEY: '' }).OPENAI_API_KEY).toBe('shimkit-test');
    await rec.dispose();

    const text = readFileSync(path, 'utf8');
    expect(text).not.toContain(realKey);
    const [interaction] = readCassette(path).interactions;
    expect(interaction?.response.status).toBe(200);
    expect(interaction?.request.headers.authorization).toBe('[redacted]');

    // record-missing records too: it keeps the key; the `env` option still wins over it.
    const missing = await server({
      cassette: { path, mode: 'record-missing', upstream: upstreamUrl },
      env: { ANTHROPIC_API_KEY: 'set-by-option' },
    });
    expect(missing.env(base)).toMatchObject({
      OPENAI_API_KEY: realKey,
      ANTHROPIC_API_KEY: 'set-by-option',
    });

    const play = await server({ cassette: { path, mode: 'replay' } });
    const replayEnv = play.env(base);
    expect(replayEnv).toMatchObject({
      OPENAI_API_KEY: 'shimkit-test',
      ANTHROPIC_API_KEY: 'shimkit-test',
    });
    expect(await openaiChat(replayEnv, 'hi')).toEqual({ text: 'real answer' });
    expect(seen).toHaveLength(1);
  });

  it('HT-09 keys in a JSON request body (api_key, apiKey, token, access_token, password …, nested too) are [redacted] in the file, in json and in bodyBase64, and the file is 0600 (an existing one of another mode too); a replay redacts the request the same way, so the real key and another key both match, and other fields still count', async () => {
    const path = join(testDir(), 'body-keys.json');
    const upstream = await server();
    upstream.enqueue({ json: { ok: 1 } });
    upstream.enqueue({ json: { ok: 2 } });
    const body = (key: string) => ({
      model: 'gpt-test',
      max_tokens: 16,
      api_key: key,
      nested: {
        apiKey: `${key}-N`,
        api_keys: [`${key}-K1`, `${key}-K2`],
        list: [{ access_token: `${key}-L`, kept: 'visible' }],
      },
      auth: { user: 'u', password: `${key}-PW` },
      token: `${key}-T`,
      messages: [{ role: 'user', content: 'hi' }],
    });
    const rec = await server({ cassette: { path, mode: 'record', upstream: upstream.url } });
    const sent = await curl(postJson(`${rec.url}/v1/things`, body('SECRET-BODY-KEY')));
    expect(sent.stdout.toString()).toBe('{"ok":1}');
    expect(upstream.requests()[0]?.json).toEqual(body('SECRET-BODY-KEY')); // the upstream got them
    await rec.dispose();

    const text = readFileSync(path, 'utf8');
    for (const secret of text.match(/SECRET-[A-Z0-9-]+/g) ?? [])
      expect.fail(`${secret} is in the cassette`);
    const [interaction] = readCassette(path).interactions;
    const redacted = {
      model: 'gpt-test',
      max_tokens: 16,
      api_key: '[redacted]',
      nested: {
        apiKey: '[redacted]',
        api_keys: '[redacted]',
        list: [{ access_token: '[redacted]', kept: 'visible' }],
      },
      auth: '[redacted]',
      token: '[redacted]',
      messages: [{ role: 'user', content: 'hi' }],
    };
    expect(interaction?.request.json).toEqual(redacted);
    const bytes = Buffer.from(interaction?.request.bodyBase64 ?? '', 'base64').toString('utf8');
    expect(JSON.parse(bytes)).toEqual(redacted);
    expect(statSync(path).mode & 0o777).toBe(0o600);

    // The real key, and another one, both match the redacted recording; another prompt does not.
    for (const key of ['SECRET-BODY-KEY', 'another-key']) {
      const play = await server({ cassette: { path, mode: 'replay' } });
      const out = await curl(postJson(`${play.url}/v1/things`, body(key)));
      expect(out.stdout.toString(), key).toBe('{"ok":1}');
      expect(play.requests()[0]?.claimedBy).toBe('cassette:body-keys.json#1');
    }
    const play = await server({ cassette: { path, mode: 'replay' } });
    const other = { ...body('SECRET-BODY-KEY'), max_tokens: 17 };
    const refused = await curl(postJson(`${play.url}/v1/things`, other));
    expect(refused.stdout.toString()).toContain('body.max_tokens: recorded 16, got 17');

    // A file written before bodies were redacted (the key in json and bodyBase64), 0644:
    // it still replays (the recording is redacted when read), and record-missing
    // rewrites it without the key, 0600.
    const old = readCassette(path);
    const sent0 = body('SECRET-OLD-KEY');
    Object.assign(old.interactions[0]?.request ?? {}, {
      json: sent0,
      bodyBase64: Buffer.from(JSON.stringify(sent0)).toString('base64'),
    });
    writeFileSync(path, JSON.stringify(old));
    chmodSync(path, 0o644);
    const more = await server({
      cassette: { path, mode: 'record-missing', upstream: upstream.url },
    });
    expect(
      (await curl(postJson(`${more.url}/v1/things`, body('yet-another-key')))).stdout.toString(),
    ).toBe('{"ok":1}');
    await curl(postJson(`${more.url}/v1/things`, { ...body('SECRET-BODY-KEY'), model: 'other' }));
    expect(more.requests().map((r) => r.claimedBy)).toEqual([
      'cassette:body-keys.json#1',
      'cassette:body-keys.json#2',
    ]);
    await more.dispose();
    expect(readCassette(path).interactions[0]?.request.json).toEqual(redacted);
    expect(readCassette(path).interactions).toHaveLength(2);
    expect(readFileSync(path, 'utf8')).not.toContain('SECRET-');
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('HT-09 which JSON body members count as keys: a part of the name (split at non-letters and case changes) that names a credential, or a plural pair such as api_keys; counts, authors and signatures stay', () => {
    const secret = [
      'api_key',
      'apiKey',
      'APIKey',
      'key',
      'token',
      'access_token',
      'refreshToken',
      'id_token',
      'client_secret',
      'secret',
      'password',
      'passwd',
      'db_pass',
      'auth',
      'Authorization',
      'credentials',
      'session_token',
      'private_key',
      'x-api-key',
      'api_keys',
      'accessTokens',
    ];
    const kept = [
      'max_tokens',
      'maxOutputTokens',
      'budget_tokens',
      'author',
      'signature',
      'keys',
      'tokens',
      'model',
      'messages',
      'keyboard',
      'monkey',
      'tokenizer',
      'passage',
    ];
    expect(secret.filter((name) => !isSecretMember(name))).toEqual([]);
    expect(kept.filter((name) => isSecretMember(name))).toEqual([]);
  });

  it("HT-09 timing: the file keeps each event's arrival; timing 'recorded' replays the gaps (no event before its recorded offset, each about a 300 ms gap after the last), 'none' sends the events at once", async () => {
    const path = join(testDir(), 'slow.json');
    const upstream = await server();
    upstream.enqueue({ sse: [{ data: 'a' }, { data: 'b' }, { data: 'c' }], eventDelayMs: 300 });
    const rec = await server({ cassette: { path, upstream: upstream.url } });
    const run = async (url: string) => {
      const out = await runCommand(process.execPath, [SSE_TIMES, `${url}/v1/stream`]);
      expect(out.stderr.toString()).toBe('');
      return JSON.parse(out.stdout.toString()) as { status: number; text: string; times: number[] };
    };
    const live = await run(rec.url);
    expect(live.text).toBe('data: a\n\ndata: b\n\ndata: c\n\n');
    await rec.dispose();
    const events = readCassette(path).interactions[0]?.response.sse ?? [];
    expect(events.map((e) => e.data)).toEqual(['a', 'b', 'c']);
    const at = events.map((e) => e.atMs);
    // Gaps of 300 ms upstream; bounds loose for a loaded machine (a late read shortens one gap).
    expect((at[1] ?? 0) - (at[0] ?? 0)).toBeGreaterThanOrEqual(200);
    expect((at[2] ?? 0) - (at[1] ?? 0)).toBeGreaterThanOrEqual(200);

    const paced = await server({ cassette: { path, mode: 'replay', timing: 'recorded' } });
    const slow = await run(paced.url);
    expect(slow.text).toBe(live.text);
    expect(slow.times).toHaveLength(3);
    // No event comes before its recorded offset (the server's headers follow the request) …
    for (const [i, t] of slow.times.entries()) expect(t).toBeGreaterThanOrEqual((at[i] ?? 0) - 2);
    // … and each comes a recorded gap after the one before (less a late read of that one).
    const [t0 = 0, t1 = 0, t2 = 0] = slow.times;
    expect(t1 - t0).toBeGreaterThanOrEqual(200);
    expect(t2 - t1).toBeGreaterThanOrEqual(200);

    const fast = await server({ cassette: { path, mode: 'replay' } });
    const quick = await run(fast.url);
    expect(quick.text).toBe(live.text);
    const [q0 = 0, , q2 = 0] = quick.times;
    expect(q2 - q0).toBeLessThan((at[2] ?? 0) - (at[0] ?? 0));
  });

  it('HT-09 record-missing replays what the file has (the upstream never sees it) and passes the rest upstream, appending it to the file', async () => {
    const path = join(testDir(), 'grow.json');
    const upstream = await server();
    upstream.expect({ path: '/first' }, { text: 'first answer' }, { times: 'always' });
    upstream.expect({ path: '/second' }, { text: 'second answer' });
    const rec = await server({ cassette: { path, upstream: upstream.url } });
    expect((await curl([`${rec.url}/first`])).stdout.toString()).toBe('first answer');
    await rec.dispose();
    const before = readCassette(path);
    expect(before.interactions).toHaveLength(1);
    expect(upstream.requests()).toHaveLength(1);

    const grow = await server({
      cassette: { path, mode: 'record-missing', upstream: upstream.url },
    });
    expect((await curl([`${grow.url}/first`])).stdout.toString()).toBe('first answer');
    expect((await curl([`${grow.url}/second`])).stdout.toString()).toBe('second answer');
    expect(grow.requests().map((r) => r.claimedBy)).toEqual([
      'cassette:grow.json#1',
      'cassette:grow.json#2',
    ]);
    expect(upstream.requests().map((r) => r.path)).toEqual(['/first', '/second']);
    await grow.dispose();
    const after = readCassette(path);
    expect(after.interactions).toHaveLength(2);
    expect(after.interactions[0]).toEqual(before.interactions[0]);
    expect(after.interactions[1]?.request.path).toBe('/second');

    // Nothing new: the file is not written again.
    const same = await server({
      cassette: { path, mode: 'record-missing', upstream: upstream.url },
    });
    expect((await curl([`${same.url}/second`])).stdout.toString()).toBe('second answer');
    await same.dispose();
    expect(readFileSync(path, 'utf8')).toBe(`${JSON.stringify(after, null, 2)}\n`);
  });

  it('HT-09 SHIMKIT_CASSETTE_MODE overrides the mode: replay a file a record-mode server would overwrite, or record without one; a bad value is refused', async () => {
    const path = join(testDir(), 'env.json');
    const upstream = await server();
    upstream.enqueue({ text: 'recorded once', times: 'always' });
    try {
      process.env[CASSETTE_MODE_VAR] = 'record';
      const rec = await server({ cassette: { path, mode: 'replay', upstream: upstream.url } });
      expect((await curl([`${rec.url}/x`])).stdout.toString()).toBe('recorded once');
      await rec.dispose();
      expect(readCassette(path).interactions).toHaveLength(1);

      process.env[CASSETTE_MODE_VAR] = 'replay';
      const play = await server({ cassette: { path, mode: 'record', upstream: upstream.url } });
      expect((await curl([`${play.url}/x`])).stdout.toString()).toBe('recorded once');
      expect(play.requests()[0]?.claimedBy).toBe('cassette:env.json#1');
      expect(upstream.requests()).toHaveLength(1);

      process.env[CASSETTE_MODE_VAR] = 'record';
      await expect(createMockServer({ cassette: path })).rejects.toThrow(
        `SHIMKIT_CASSETTE_MODE=record says to record it`,
      );
      process.env[CASSETTE_MODE_VAR] = 'lockdown';
      await expect(createMockServer({ cassette: path })).rejects.toThrow(
        `SHIMKIT_CASSETTE_MODE="lockdown" is not one of 'record', 'replay', 'auto', 'record-missing'`,
      );
    } finally {
      delete process.env[CASSETTE_MODE_VAR];
    }
  });

  it('HT-09 a recorded stream reaches the client as it comes: with the upstream held after its first text event, curl already has that event; released, the rest follows and is recorded', async () => {
    const path = join(testDir(), 'live.json');
    const upstream = await server();
    upstream.enqueue(chat(['first', 'second']));
    const held = upstream.hold(CHAT, { afterEvents: 2 });
    const rec = await server({ cassette: { path, upstream: upstream.url } });
    const client = spawnTracked('curl', [
      '-sS',
      '-N',
      '--noproxy',
      '*',
      '--max-time',
      '20',
      ...postJson(`${rec.url}/v1/chat/completions`, { stream: true }),
    ]);
    let seen = '';
    client.stdout?.on('data', (data: Buffer) => {
      seen += data.toString();
    });
    const done = completion(client);
    await held.waitBlocked({ timeoutMs: 10_000 });
    await vi.waitFor(() => expect(seen).toContain('"content":"first"'), {
      timeout: 10_000,
      interval: 20,
    });
    expect(seen).not.toContain('"content":"second"');
    expect(seen).not.toContain('[DONE]');
    await vi.waitFor(() => expect(rec.requests()[0]?.response.events).toBe(2), {
      timeout: 10_000,
      interval: 20,
    });
    expect(rec.requests()[0]?.response.endedBy).toBeUndefined();
    held.release();
    const exit = await done;
    expect(exit.code).toBe(0);
    expect(seen).toContain('"content":"second"');
    expect(seen.endsWith('data: [DONE]\n\n')).toBe(true);
    await rec.dispose();
    expect(readCassette(path).interactions[0]?.response.sse).toHaveLength(5);
  });

  it('HT-09 an upstream that fails while recording: refused → 502 naming it; cut mid-stream (FIN or RST) → the client sees the same cut; the entry says so and nothing is recorded', async () => {
    const dir = testDir();
    const refusedPath = join(dir, 'refused.json');
    // The port just freed can be the next one handed out: to this very server, which would
    // then record from itself. Such a pair is thrown away.
    let port = await closedPort();
    let refused = await server({
      cassette: { path: refusedPath, upstream: `http://127.0.0.1:${port}` },
    });
    while (new URL(refused.url).port === String(port)) {
      await refused.dispose();
      port = await closedPort();
      refused = await server({
        cassette: { path: refusedPath, upstream: `http://127.0.0.1:${port}` },
      });
    }
    const out = await curl(['-i', `${refused.url}/v1/models`]);
    const text = out.stdout.toString();
    expect(text).toMatch(/^HTTP\/1\.1 502 /);
    expect(text).toContain('x-should-retry: false');
    expect(text).toContain(
      `the upstream http://127.0.0.1:${port} of the cassette ${refusedPath} failed for GET /v1/models (request #1) before it answered (connect ECONNREFUSED`,
    );
    expect(refused.requests()[0]).toMatchObject({
      claimedBy: 'cassette:refused.json#1',
      response: { status: 502 },
      error: expect.stringContaining('nothing was recorded for it'),
    });
    await refused.dispose();
    expect(existsSync(refusedPath)).toBe(false);

    const cutPath = join(dir, 'cut.json');
    const upstream = await server();
    upstream.expect(
      { path: '/fin' },
      chat(['partial', 'never'], { cut: { afterEvents: 2, how: 'fin' } }),
    );
    upstream.expect(
      { path: '/rst' },
      chat(['partial', 'never'], { cut: { afterEvents: 2, how: 'rst' } }),
    );
    upstream.expect({ path: '/ok' }, { text: 'fine' });
    const rec = await server({ cassette: { path: cutPath, upstream: upstream.url } });
    const fin = await curl(['-N', `${rec.url}/fin`]);
    const rst = await curl(['-N', `${rec.url}/rst`]);
    const ok = await curl([`${rec.url}/ok`]);
    expect(fin.code).toBe(18);
    expect(rst.code).toBe(56);
    for (const cut of [fin, rst]) {
      expect(cut.stdout.toString()).toContain('"content":"partial"');
      expect(cut.stdout.toString()).not.toContain('never');
    }
    expect(ok.stdout.toString()).toBe('fine');
    const [finEntry, rstEntry] = rec.requests();
    expect(finEntry).toMatchObject({
      claimedBy: 'cassette:cut.json#1',
      response: { status: 200, endedBy: 'cut', events: 2 },
    });
    expect(finEntry?.error).toContain(
      "the client's response was cut the same way (fin), and nothing was recorded for it",
    );
    expect(rstEntry?.error).toContain(
      "the client's response was cut the same way (rst), and nothing was recorded for it",
    );
    await rec.dispose();
    const file = readCassette(cutPath);
    expect(file.interactions.map((i) => i.request.path)).toEqual(['/ok']);
  });

  it('HT-09 under strict, an interaction not replayed fails dispose() as an unused expectation does; reset() scripts the interactions again', async () => {
    const path = join(testDir(), 'strict.json');
    const upstream = await server();
    upstream.expect({ path: '/a' }, { text: 'A' });
    upstream.expect({ path: '/b' }, { text: 'B' });
    const rec = await server({ cassette: { path, upstream: upstream.url } });
    await curl([`${rec.url}/a`]);
    await curl([`${rec.url}/b`]);
    await rec.dispose();

    const play = await createMockServer({ strict: true, cassette: path });
    try {
      expect((await curl([`${play.url}/a`])).stdout.toString()).toBe('A');
      play.reset();
      expect(play.requests()).toHaveLength(0);
      expect((await curl([`${play.url}/a`])).stdout.toString()).toBe('A');
      expect(() => play.assertDone()).toThrow(UnusedResponsesError);
      expect(() => play.assertDone()).toThrow(
        /never used: expectation 'cassette:strict\.json#2' \{ method: 'GET', path: '\/b', query and body as recorded \}/,
      );
    } finally {
      await expect(play.dispose()).rejects.toThrow(UnusedResponsesError);
    }
  });

  it('HT-09 bad options are refused at createMockServer() naming the option: no upstream to record from, a relative path, an unknown mode, timing or key, an upstream that is not an http(s) base URL, a replay without a file, a broken file', async () => {
    const dir = testDir();
    const path = join(dir, 'c.json');
    const refuse = (options: unknown, text: string | RegExp) =>
      expect(createMockServer({ cassette: options } as never)).rejects.toThrow(text);
    await refuse(
      { path, mode: 'record' },
      `the cassette ${path} has no \`upstream\` to record from (mode 'record' records it)`,
    );
    await refuse(path, "mode 'auto' records it, as there is no file yet");
    await refuse({ path, mode: 'record-missing' }, 'has no `upstream`');
    await refuse(
      'c.json',
      'Expected the cassette path of createMockServer() to be an absolute file path, got "c.json" (string)',
    );
    await refuse(
      { path, mode: 'rewind' },
      `Expected the cassette \`mode\` of createMockServer() to be one of 'record', 'replay', 'auto', 'record-missing', got "rewind" (string)`,
    );
    await refuse(
      { path, upstream: 'http://x', timing: 'fast' },
      'Expected the `cassette.timing` option of createMockServer() to be "none" or "recorded", got "fast" (string)',
    );
    await refuse(
      { path, upstream: 'http://x', replay: true },
      'Unknown option `replay` for createMockServer() `cassette`.',
    );
    for (const upstream of [
      'ftp://example.com',
      'http://user:pw@example.com',
      'http://example.com/?key=1',
      'example.com',
      42,
    ]) {
      await refuse(
        { path, upstream },
        'Expected the `cassette.upstream` option of createMockServer() to be an http: or https: base URL',
      );
    }
    await refuse(
      { path, mode: 'replay' },
      `there is no cassette to replay at ${path}. Record it first (mode 'record' or 'auto', or SHIMKIT_CASSETTE_MODE=record), with \`upstream\` set`,
    );
    const error = await createMockServer({ cassette: { path, mode: 'replay' } }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidOptionError);

    writeFileSync(path, '{"version":1,"calls":[]}');
    await refuse(
      path,
      `the cassette ${path} is not a shimkit HTTP cassette: expected { "version": 1, "kind": "http", "interactions": [...] }, got an object with "version", "calls"`,
    );
    const good = {
      request: { method: 'GET', path: '/x', query: {}, headers: {}, bodyBase64: '' },
      response: { status: 200, headers: {}, bodyBase64: '' },
      durationMs: 1,
    };
    const cases: Array<[unknown, string]> = [
      [
        { ...good, request: { ...good.request, path: 'x' } },
        'interactions[1].request.path must be a path starting with "/", got "x" (string)',
      ],
      [
        { ...good, request: { ...good.request, bodyBase64: '!!' } },
        'interactions[1].request.bodyBase64 must be canonical base64',
      ],
      [
        { ...good, response: { ...good.response, status: 42 } },
        'interactions[1].response: status must be an integer from 200 to 999, got 42 (number)',
      ],
      [
        { ...good, response: { status: 200, headers: {}, sse: [{ data: 'x' }] } },
        'interactions[1].response.sse[0].atMs must be a number of milliseconds from 0, got undefined',
      ],
      [
        {
          ...good,
          response: { status: 200, headers: {}, sse: [{ data: 'x', atMs: 0, colour: 1 }] },
        },
        'Unknown key `colour`',
      ],
      ['nope', 'interactions[1] must be an object { request, response, durationMs }'],
    ];
    for (const [bad, text] of cases) {
      writeFileSync(path, JSON.stringify({ version: 1, kind: 'http', interactions: [good, bad] }));
      await refuse(path, text);
      await refuse(path, `createMockServer(): the cassette ${path} has a bad interaction`);
    }
  });

  it('HT-09 records from an https upstream with a base path, over one kept-alive connection (in a process that trusts its certificate)', async () => {
    const dir = testDir();
    const [key, cert, path] = [join(dir, 'key.pem'), join(dir, 'cert.pem'), join(dir, 'tls.json')];
    const made = await runCommand('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ]);
    expect(made.code, made.stderr.toString()).toBe(0);
    const out = await runCommand(process.execPath, [HTTPS_RECORD, key, cert, path], {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: cert },
    });
    expect(out.stderr.toString()).toBe('');
    expect(JSON.parse(out.stdout.toString())).toEqual({
      answers: [
        '{"url":"/base/v1/a?x=1","body":"to /v1/a?x=1"}',
        '{"url":"/base/v1/b","body":"to /v1/b"}',
        'data: one\n\ndata: two\n\n',
      ],
      connections: 1,
    });
    const file = readCassette(path);
    expect(file.interactions.map((i) => [i.request.path, i.request.query])).toEqual([
      ['/v1/a', { x: '1' }],
      ['/v1/b', {}],
      ['/stream', {}],
    ]);
    expect(file.interactions[2]?.response.sse?.map((e) => e.data)).toEqual(['one', 'two']);
  });

  it('HT-09 a recording that cannot be written makes dispose() reject with the error, once the server is gone', async () => {
    const dir = testDir();
    writeFileSync(join(dir, 'a-file'), '');
    const path = join(dir, 'a-file', 'chat.json'); // its parent is a file
    const upstream = await server();
    upstream.enqueue({ text: 'ok' });
    const rec = await createMockServer({ cassette: { path, upstream: upstream.url } });
    expect((await curl([`${rec.url}/x`])).stdout.toString()).toBe('ok');
    await expect(rec.dispose()).rejects.toThrow(/ENOTDIR|EEXIST/);
    expect((await curl([`${rec.url}/x`])).code).toBe(7); // nothing listens there any more
  });
});

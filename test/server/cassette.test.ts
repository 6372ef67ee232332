import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import {
  CASSETTE_MODE_VAR,
  createMockServer,
  InvalidOptionError,
  type MockServerResponse,
  type ServerCassette,
  UnusedResponsesError,
} from '../../src/index.js';
import { completion, runCommand, spawnTracked, testDir } from '../helpers/index.js';
import { curl, postJson, server } from '../helpers/server.js';

const OPENAI_CHAT = fileURLToPath(new URL('../fixtures/openai-chat.mjs', import.meta.url));
const SSE_TIMES = fileURLToPath(new URL('../fixtures/sse-times.mjs', import.meta.url));

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
async function openaiChat(env: Record<string, string>, prompt: string): Promise<{ text?: string; status?: number; message?: string }> {
  const out = await runCommand(process.execPath, [OPENAI_CHAT, prompt], { env });
  expect(out.stderr.toString()).toBe('');
  return JSON.parse(out.stdout.toString());
}

describe('cassettes: record and replay (HT-09)', () => {
  it('HT-09 record passes requests upstream and writes them at dispose(); a fresh replaying server gives curl and the openai SDK the same bytes, each interaction once, and fails an extra request naming the file', async () => {
    const path = join(testDir(), 'chat.cassette.json');
    const upstream = await server();
    upstream.expect({ ...CHAT, json: { messages: [{ content: 'one' }] } }, chat(['Hel', 'lo']));
    upstream.expect({ ...CHAT, json: { messages: [{ content: 'two' }] } }, chat(['Good', 'bye']));
    upstream.expect({ method: 'GET', path: '/v1/models' }, { json: { data: [{ id: 'gpt-test' }] }, headers: { 'x-upstream': 'yes' } });

    const rec = await server({ cassette: { path, mode: 'record', upstream: upstream.url } });
    const recorded = {
      sdk: await openaiChat(rec.env(), 'one'),
      curl: await curl(['-N', ...postJson(`${rec.url}/v1/chat/completions`, { model: 'gpt-test', messages: [{ role: 'user', content: 'two' }], stream: true })]),
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
    expect(first?.request).toMatchObject({ method: 'POST', path: '/v1/chat/completions', query: {}, json: { model: 'gpt-test', stream: true } });
    expect(first?.response.status).toBe(200);
    expect(first?.response.sse?.map((e) => e.data)).toEqual([...chat(['Hel', 'lo']).sse!.map((e) => e.data)]);
    expect(first?.response.sse?.every((e) => typeof e.atMs === 'number' && e.atMs >= 0)).toBe(true);
    expect(first?.response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(first?.response.headers['transfer-encoding']).toBeUndefined();
    expect(second?.request.json).toMatchObject({ messages: [{ content: 'two' }] });
    expect(third?.request).toMatchObject({ method: 'GET', path: '/v1/models', query: { limit: '5' }, bodyBase64: '' });
    expect(Buffer.from(third?.response.bodyBase64 ?? '', 'base64').toString()).toBe('{"data":[{"id":"gpt-test"}]}');
    expect(third?.response.headers['x-upstream']).toBe('yes');
    expect(first?.durationMs).toBeGreaterThanOrEqual(0);

    await upstream.dispose();
    const play = await server({ cassette: { path, mode: 'replay' } });
    // In another order than recorded: each request finds its own interaction.
    const replayed = {
      curl: await curl(['-N', ...postJson(`${play.url}/v1/chat/completions`, { model: 'gpt-test', messages: [{ role: 'user', content: 'two' }], stream: true })]),
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
    expect(play.requests()[4]).toMatchObject({ claimedBy: null, error: expect.stringContaining(path) });
  });
});

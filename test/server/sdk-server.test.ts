// The real SDKs against the real server (HT-03, HT-05, HT-08): openai 6.x
// (chat completions and the Responses API) and @anthropic-ai/sdk, each in a
// child process configured by nothing but api.env(), stream the builders'
// formats, retry a 429 after retry-after-ms and a 503 after retry-after,
// report a stream cut mid-way with the text that came first (and do not
// retry it), and do not retry the unmatched 500 (x-should-retry: false).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type MockServer, type MockServerResponse, reply, sse } from '../../src/index.js';
import { runCommand } from '../helpers/index.js';
import { server } from '../helpers/server.js';

const CLIENT = join(import.meta.dirname, '../fixtures/sdk-client.mjs');

type Kind = 'openai-chat' | 'openai-responses' | 'anthropic';

const KINDS: Array<{ kind: Kind; path: string; stream: (text: string[]) => MockServerResponse }> = [
  { kind: 'openai-chat', path: '/v1/chat/completions', stream: (t) => sse.chat(t) },
  { kind: 'openai-responses', path: '/v1/responses', stream: (t) => sse.responses(t) },
  { kind: 'anthropic', path: '/v1/messages', stream: (t) => sse.messages(t) },
];

interface ClientOut {
  text: string;
  error: { status: number | null; message: string } | null;
}

/** Run the SDK client of `kind` with the server's env; its JSON line. */
async function client(
  api: MockServer,
  kind: Kind,
  env: Record<string, string> = {},
): Promise<ClientOut> {
  const r = await runCommand(process.execPath, [CLIENT, kind, 'say hello'], {
    env: { ...api.env(), ...env },
  });
  expect(r.code, r.stderr.toString()).toBe(0);
  return JSON.parse(r.stdout.toString()) as ClientOut;
}

describe.each(KINDS)('$kind through env()', ({ kind, path, stream }) => {
  it(`HT-08 ${kind}: the SDK streams the builder's format from the server`, async () => {
    const api = await server({ strict: true });
    api.expect({ method: 'POST', path, json: { stream: true } }, stream(['Hel', 'lo']), {
      name: 'turn',
    });
    expect(await client(api, kind)).toEqual({ text: 'Hello', error: null });
    expect(api.requests()).toMatchObject([
      { claimedBy: 'turn', response: { status: 200, endedBy: 'complete' } },
    ]);
    api.assertDone();
  });

  it(`HT-03 HT-08 ${kind}: a 429 with retry-after-ms is retried once, after it`, async () => {
    const api = await server({ strict: true });
    api.enqueue([reply.status(429, { retryAfterMs: 200 }), stream(['ok'])]);
    expect(await client(api, kind)).toEqual({ text: 'ok', error: null });
    const [limited, retried] = api.requests();
    expect(api.requests()).toHaveLength(2);
    expect([limited?.claimedBy, retried?.claimedBy]).toEqual(['fifo#1', 'fifo#2']);
    expect(retried?.headers['x-stainless-retry-count']).toBe('1');
    expect((retried?.receivedAt ?? 0) - (limited?.receivedAt ?? 0)).toBeGreaterThanOrEqual(200);
  });

  it(`HT-05 HT-08 ${kind}: a stream reset after the first delta gives that text and an error, and no retry`, async () => {
    const api = await server({ strict: true });
    const whole = stream(['Hel', 'lo']);
    // The event that carries the first delta, counted from 1: cut right after it.
    const first = (whole.sse ?? []).findIndex((e) => JSON.stringify(e.data).includes('"Hel"')) + 1;
    expect(first).toBeGreaterThan(0);
    api.enqueue({ ...whole, cut: { afterEvents: first, how: 'rst' } });
    const out = await client(api, kind);
    expect(out.text).toBe('Hel');
    expect(out.error?.message).toBeTruthy();
    expect(api.requests()).toHaveLength(1);
    expect(api.requests()[0]?.response).toMatchObject({ events: first, endedBy: 'cut' });
  });

  it(`HT-03 ${kind}: the unmatched 500 (x-should-retry: false) is reported at once, not retried`, async () => {
    const api = await server();
    const out = await client(api, kind);
    expect(out.error?.status).toBe(500);
    expect(out.error?.message).toContain(`shimkit: no scripted response for POST ${path}`);
    expect(api.requests()).toHaveLength(1);
  });
});

describe('retry-after in seconds', () => {
  it('HT-08 a 503 with retryAfter: 1 is retried after a second (openai chat)', async () => {
    const api = await server({ strict: true });
    api.enqueue([reply.status(503, { retryAfter: 1 }), sse.chat('ok')]);
    expect(await client(api, 'openai-chat')).toEqual({ text: 'ok', error: null });
    const [first, second] = api.requests();
    expect(api.requests()).toHaveLength(2);
    expect(first?.response.status).toBe(503);
    expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(900);
  });
});

describe('an SDK that retries', () => {
  it.each(['openai-chat', 'anthropic'] as const)(
    'HT-03 %s: the retry of one scripted 500 is unmatched, and its 500 names the scripted one it retries and what to script',
    async (kind) => {
      const api = await server();
      const path = kind === 'anthropic' ? '/v1/messages' : '/v1/chat/completions';
      api.enqueue(reply.status(500));
      const out = await client(api, kind);
      expect(api.requests().map((r) => [r.claimedBy, r.response.status])).toEqual([
        ['fifo#1', 500],
        [null, 500],
      ]);
      const advice = `Request #1 to POST ${path} got a scripted 500 (fifo#1), and the OpenAI and Anthropic SDKs retry a 408, 409, 429 or 5xx answer (2 retries by default): this is likely such a retry. To answer the retries too, give that response \`times: 3\`; to have the SDK give up at once, add the header \`x-should-retry: false\` to it (reply.status(500, { headers: { 'x-should-retry': 'false' } })); or make the client with maxRetries: 0.`;
      expect(api.requests()[1]?.error).toContain(advice);
      expect(out.error?.message).toContain('got a scripted 500 (fifo#1)');
    },
  );

  it('HT-03 the advice holds: times: 3 answers the retries, x-should-retry: false stops them (openai chat)', async () => {
    const api = await server();
    api.enqueue(reply.status(500, { times: 3 }));
    expect((await client(api, 'openai-chat')).error?.status).toBe(500);
    expect(api.requests().map((r) => r.claimedBy)).toEqual(['fifo#1', 'fifo#1', 'fifo#1']);
    api.reset();
    api.enqueue(reply.status(500, { headers: { 'x-should-retry': 'false' } }));
    expect((await client(api, 'openai-chat')).error?.status).toBe(500);
    expect(api.requests().map((r) => r.claimedBy)).toEqual(['fifo#1']);
  });

  it('HT-16 openai chat: an attempt that times out while its response is held gives a retryable response back; the SDK retry gets it', async () => {
    const api = await server({ strict: true });
    const held = api.hold({ path: '/v1/chat/completions' });
    api.enqueue(sse.chat('ok', { retryable: true }));
    const out = await client(api, 'openai-chat', { TIMEOUT_MS: '500' });
    expect(out).toEqual({ text: 'ok', error: null });
    expect(await held.waitReceived()).toMatchObject({ seq: 1 });
    expect(
      api.requests().map((r) => [r.claimedBy, r.response.endedBy, r.response.requeued]),
    ).toEqual([
      ['fifo#1', 'client-abort', true],
      ['fifo#1', 'complete', undefined],
    ]);
    api.assertDone();
  });
});

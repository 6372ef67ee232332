import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  any,
  createMockServer,
  InvalidOptionError,
  UnusedResponsesError,
} from '../../src/index.js';
import { completion, spawnTracked, testDir } from '../helpers/index.js';
import { curl, postJson, server } from '../helpers/server.js';

const LOAD = fileURLToPath(new URL('../fixtures/http-load.mjs', import.meta.url));

/** POST `json` with curl; the body it got. */
async function post(url: string, json: unknown, extra: string[] = []): Promise<string> {
  const out = await curl([...postJson(url, json), ...extra]);
  return out.stdout.toString();
}

describe('claims: expectation, then FIFO, then unmatched (HT-03)', () => {
  it('HT-03 the first fitting expectation in order wins, then the FIFO in order, then the unmatched 500', async () => {
    const api = await server();
    api.enqueue([{ text: 'fifo one' }, { text: 'fifo two', times: 2 }]);
    api.expect({ path: '/v1/x', json: { n: 1 } }, { text: 'first' }, { name: 'first' });
    api.expect({ path: '/v1/x' }, { text: 'second' }, { times: 2 });
    api.expect({ path: '/v1/x' }, { text: 'third' }, { optional: true });
    const got: string[] = [];
    for (const n of [1, 1, 2, 2, 2, 2, 2, 2]) got.push(await post(`${api.url}/v1/x`, { n }));
    expect(got.slice(0, 7)).toEqual([
      'first',
      'second',
      'second',
      'third',
      'fifo one',
      'fifo two',
      'fifo two',
    ]);
    expect(JSON.parse(got[7] as string)).toMatchObject({
      type: 'error',
      error: { type: 'shimkit_unmatched' },
    });
    expect(api.requests().map((r) => r.claimedBy)).toEqual([
      'first',
      'expect#2',
      'expect#2',
      'expect#3',
      'fifo#1',
      'fifo#2',
      'fifo#2',
      null,
    ]);
    expect(() => api.assertDone()).not.toThrow();
  });

  it('HT-03 matchers: method in any case, path RegExp, query and headers (names in any case) with strings, RegExps and any()', async () => {
    const api = await server();
    const e = api.expect(
      {
        method: 'post',
        path: /^\/v1\/(chat|responses)$/,
        query: { 'api-version': /^2024-/, trace: any() },
        headers: { 'X-Team': 'core', Authorization: /^Bearer / },
      },
      { text: 'fits' },
      { times: 'always' },
    );
    const ok = ['-H', 'x-team: core', '-H', 'authorization: Bearer k'];
    expect(await post(`${api.url}/v1/chat?api-version=2024-05&trace=`, {}, ok)).toBe('fits');
    expect(await post(`${api.url}/v1/responses?api-version=2024-01&trace=1`, {}, ok)).toBe('fits');
    const misses = [
      [
        `${api.url}/v1/models?api-version=2024-05&trace=1`,
        ok,
        'path: expected /^\\/v1\\/(chat|responses)$/, got "/v1/models"',
      ],
      [
        `${api.url}/v1/chat?api-version=2023-01&trace=1`,
        ok,
        'query.api-version: expected /^2024-/, got "2023-01"',
      ],
      [`${api.url}/v1/chat?api-version=2024-05`, ok, 'query.trace: expected any(), got nothing'],
      [
        `${api.url}/v1/chat?api-version=2024-05&trace=1`,
        ['-H', 'x-team: web', '-H', 'authorization: Bearer k'],
        'headers.x-team: expected "core", got "web"',
      ],
    ] as const;
    for (const [url, headers, why] of misses) {
      const body = JSON.parse(await post(url, {}, [...headers]));
      expect(body.error.message).toContain(`Closest: expectation 'expect#1' — ${why}.`);
    }
    const get = await curl([`${api.url}/v1/chat?api-version=2024-05&trace=1`, ...ok]);
    expect(JSON.parse(get.stdout.toString()).error.message).toContain(
      'method: expected POST, got GET',
    );
    expect(e.used).toBe(2);
    expect(e.isSatisfied).toBe(true);
  });

  it('HT-03 json is a subset: objects by key, recursively; arrays element by element, of the same length; any() for a value present', async () => {
    const api = await server();
    api.expect(
      {
        json: {
          model: any(),
          messages: [{ role: 'system' }, { role: 'user', content: /hello/ }],
          stream: true,
        },
      },
      { text: 'subset' },
      { times: 'always' },
    );
    const messages = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hello there' },
    ];
    expect(await post(api.url, { model: 'm', messages, stream: true, extra: [1] })).toBe('subset');
    const message = async (body: unknown) =>
      JSON.parse(await post(api.url, body)).error.message as string;
    expect(await message({ messages, stream: true })).toContain(
      'json.model: expected any value, got nothing',
    );
    expect(
      await message({ model: 'm', messages: [...messages, { role: 'user' }], stream: true }),
    ).toContain('json.messages: expected an array of 2, got one of 3');
    expect(
      await message({
        model: 'm',
        messages: [messages[0], { role: 'user', content: 'bye' }],
        stream: true,
      }),
    ).toContain('json.messages[1].content: expected /hello/, got "bye"');
    expect(await message({ model: 'm', messages, stream: false })).toContain(
      'json.stream: expected true, got false',
    );
    const notJson = await curl(['-X', 'POST', '--data-binary', 'plain text', api.url]);
    expect(JSON.parse(notJson.stdout.toString()).error.message).toContain(
      'json: the body is not JSON (10 bytes)',
    );
  });

  it('HT-03 a JSON body with invalid UTF-8 is decoded first, each bad sequence becoming U+FFFD: json matches on the decoded text (two bodies that differ only in bad bytes match alike); the log keeps the bytes, and a predicate on them tells the bodies apart', async () => {
    const dir = testDir();
    const bodies = [
      Buffer.concat([Buffer.from('{"content":"a'), Buffer.from([0xff]), Buffer.from('b"}')]),
      Buffer.concat([Buffer.from('{"content":"a'), Buffer.from([0xc3]), Buffer.from('b"}')]),
    ];
    const files = bodies.map((bytes, i) => {
      const file = join(dir, `body-${i}.json`);
      writeFileSync(file, bytes);
      return file;
    });
    const api = await server();
    const first = bodies[0] as Buffer;
    api.expect(
      { json: { content: 'a\uFFFDb' }, predicate: (r) => r.body.equals(first) },
      { text: 'the 0xff body' },
    );
    api.expect({ json: { content: 'a\uFFFDb' } }, { text: 'decoded' }, { times: 'always' });
    const send = async (file: string) =>
      (
        await curl(['-X', 'POST', '--data-binary', `@${file}`, `${api.url}/v1/x`])
      ).stdout.toString();
    expect(await send(files[1] as string)).toBe('decoded');
    expect(await send(files[0] as string)).toBe('the 0xff body');
    expect(await send(files[0] as string)).toBe('decoded');
    const log = api.requests();
    expect(log.map((r) => r.json)).toEqual([
      { content: 'a\uFFFDb' },
      { content: 'a\uFFFDb' },
      { content: 'a\uFFFDb' },
    ]);
    expect(log.map((r) => r.body)).toEqual([bodies[1], bodies[0], bodies[0]]);
  });

  it('HT-03 a predicate runs on the test thread with the logged request; false passes the request on', async () => {
    const api = await server();
    const seen: string[] = [];
    api.expect(
      {
        path: '/v1/p',
        predicate: (request) => {
          seen.push(`${request.seq} ${(request.json as { who: string }).who}`);
          return (request.json as { who: string }).who === 'alice';
        },
      },
      { text: 'alice path' },
      { times: 2, name: 'alice' },
    );
    api.enqueue({ text: 'fallback' });
    expect(await post(`${api.url}/v1/p`, { who: 'bob' })).toBe('fallback');
    expect(await post(`${api.url}/v1/p`, { who: 'alice' })).toBe('alice path');
    const third = JSON.parse(await post(`${api.url}/v1/p`, { who: 'carol' }));
    expect(third.error.message).toContain(
      "Closest: expectation 'alice' — its predicate returned false.",
    );
    expect(seen).toEqual(['1 bob', '2 alice', '3 carol']);
  });

  it('HT-03 a function response is claimed once in the server and its content asked of the test thread', async () => {
    const api = await server();
    const e = api.expect(
      { path: '/v1/f' },
      async (request) => ({ status: 202, json: { echo: request.json } }),
      { times: 2 },
    );
    api.enqueue((request) => ({ text: `fifo saw ${request.path}` }));
    expect(await post(`${api.url}/v1/f`, { a: 1 })).toBe('{"echo":{"a":1}}');
    expect(await post(`${api.url}/v1/f`, { a: 2 })).toBe('{"echo":{"a":2}}');
    expect(await post(`${api.url}/v1/f`, { a: 3 })).toBe('fifo saw /v1/f');
    expect(e.requests().map((r) => r.response.status)).toEqual([202, 202]);
    expect(api.requests().map((r) => r.claimedBy)).toEqual(['expect#1', 'expect#1', 'fifo#1']);
  });

  it('HT-03 a function response that throws or returns a bad response gets a 500 naming it, in the body and the log', async () => {
    const api = await server();
    api.expect(
      { path: '/throws' },
      () => {
        throw new Error('boom');
      },
      { name: 'thrower' },
    );
    api.expect({ path: '/bad' }, () => ({ stauts: 200 }) as never, { name: 'typo' });
    const thrown = JSON.parse(await post(`${api.url}/throws`, {}));
    expect(thrown.error.message).toBe(
      "shimkit: the response function of expectation 'thrower' failed for POST /throws (request #1): boom",
    );
    const bad = JSON.parse(await post(`${api.url}/bad`, {}));
    expect(bad.error.message).toMatch(
      /^shimkit: the response function of expectation 'typo' failed .*Unknown key `stauts`.*Did you mean `status`\?/,
    );
    expect(api.requests()[1]?.error).toBe(bad.error.message);
  });

  it("HT-03 unmatched 'fail': a 500 with x-should-retry: false, the SDK error shape, the closest expectation and the call to add", async () => {
    const api = await server();
    api.expect(
      { method: 'POST', path: '/v1/chat/completions', json: { stream: true } },
      { sse: [{ data: 'x' }] },
      { name: 'plan' },
    );
    await post(`${api.url}/v1/chat/completions`, { stream: true });
    await post(`${api.url}/v1/other`, {});
    const out = await curl([
      '-i',
      ...postJson(`${api.url}/v1/chat/completions`, { stream: false }),
    ]);
    const [head, body] = out.stdout.toString().split('\r\n\r\n') as [string, string];
    expect(head).toMatch(/^HTTP\/1\.1 500 /);
    expect(head).toContain('x-should-retry: false');
    expect(head).toContain('content-type: application/json');
    const message =
      "shimkit: no scripted response for POST /v1/chat/completions (request #3). Closest: expectation 'plan' — json.stream: expected true, got false. The FIFO is empty. To answer it: api.expect({ method: 'POST', path: '/v1/chat/completions' }, …) or api.enqueue(…).";
    expect(JSON.parse(body)).toEqual({
      type: 'error',
      error: { type: 'shimkit_unmatched', code: 'shimkit_unmatched', param: null, message },
    });
    const entry = api.requests()[2];
    expect(entry).toMatchObject({
      claimedBy: null,
      error: message,
      response: { status: 500, endedBy: 'complete' },
    });
    expect(api.requests()[1]?.error).toContain(
      'Closest: expectation \'plan\' — path: expected "/v1/chat/completions", got "/v1/other".',
    );
  });

  it("HT-03 unmatched 'echo' answers 200 with the request's body and content-type, logged claimedBy null without an error", async () => {
    const api = await server({ unmatched: 'echo' });
    expect(await post(`${api.url}/v1/anything`, { back: [1, 2] })).toBe('{"back":[1,2]}');
    expect(api.requests()[0]).toMatchObject({
      claimedBy: null,
      error: undefined,
      response: { status: 200 },
    });
  });

  it('HT-03 unmatched as a function: asked on the test thread for each request nothing else took', async () => {
    const api = await server({
      unmatched: (request) => ({ status: 404, json: { missing: request.path } }),
    });
    api.expect({ path: '/known' }, { text: 'known' });
    expect(await post(`${api.url}/known`, {})).toBe('known');
    expect(await post(`${api.url}/unknown`, {})).toBe('{"missing":"/unknown"}');
    expect(api.requests().map((r) => [r.claimedBy, r.response.status])).toEqual([
      ['expect#1', 200],
      [null, 404],
    ]);
  });

  it('HT-03 assertDone() lists what was not used as often as scripted (optional ones aside); strict adds unmatched requests', async () => {
    const api = await server();
    api.expect({ path: '/a' }, { text: 'a' }, { name: 'twice', times: 2 });
    api.expect({ path: '/b' }, { text: 'b' }, { name: 'spare', optional: true });
    api.expect({ path: '/e' }, { status: 429, text: 'slow down' }, { name: 'never' });
    api.enqueue({ json: { q: 1 } });
    await post(`${api.url}/a`, {});
    await post(`${api.url}/c`, {});
    await post(`${api.url}/d`, {});
    const error = (() => {
      try {
        api.assertDone();
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(UnusedResponsesError);
    expect(error?.message).toContain(
      `mock server ${api.url}: 2 of 4 scripted uses made; never used: expectation 'never' { path: '/e' } → {status:429,body:[9 bytes]}; used too few times: expectation 'twice' { path: '/a' } → {status:200,body:[1 bytes]} (1 of 2 times).`,
    );
    expect(error?.message).toContain('#3 POST /d → unmatched, 500, complete');

    const strict = await createMockServer({ strict: true });
    strict.enqueue({ text: 'one' });
    await post(`${strict.url}/x`, {});
    await post(`${strict.url}/y`, {});
    expect(() => strict.assertDone()).toThrow(
      /1 request had no scripted response \(#2\)\.\n {2}shimkit: no scripted response for POST \/y \(request #2\)/,
    );
    const thrown = await strict.dispose().catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(UnusedResponsesError);
    // The worker was gone before the report threw: nothing answers any more.
    expect((await curl(['--max-time', '2', `${strict.url}/z`])).code).toBe(7);
    await strict.dispose(); // idempotent: a second call throws nothing
  });

  it("HT-03 strict needs unmatched 'fail'", async () => {
    await expect(createMockServer({ strict: true, unmatched: 'echo' })).rejects.toThrow(
      InvalidOptionError,
    );
    await expect(createMockServer({ strict: true, unmatched: 'echo' })).rejects.toThrow(
      /needs `unmatched: 'fail'`/,
    );
  });

  it('HT-03 enqueue() that returned is seen by the next request of a client already running and connected', async () => {
    const api = await server();
    api.enqueue({ text: 'warm-up' });
    const script = `
      const http = require('node:http');
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const get = () => new Promise((resolve) => http.get(process.argv[1], { agent }, (res) => { let b = ''; res.on('data', (c) => b += c); res.on('end', () => resolve(b)); }));
      (async () => {
        console.log(await get());
        process.stdin.once('data', async () => { console.log(await get()); agent.destroy(); process.stdin.destroy(); });
      })();`;
    const child = spawnTracked(process.execPath, ['-e', script, `${api.url}/k`]);
    const done = completion(child);
    await api.waitForRequests(1);
    api.enqueue({ text: 'scripted just now' });
    child.stdin?.write('go\n');
    expect((await done).stdout.toString()).toBe('warm-up\nscripted just now\n');
  });

  it('HT-03 1,000 concurrent requests from 4 processes on 600 queued responses: each claimed exactly once, 400 unmatched 500s, no connection error', async () => {
    const api = await server();
    api.enqueue(Array.from({ length: 600 }, (_, i) => ({ text: `r${i + 1}` })));
    const children = Array.from({ length: 4 }, () =>
      completion(spawnTracked(process.execPath, [LOAD, api.url, '250'])),
    );
    const results = (await Promise.all(children)).map((exit) => JSON.parse(exit.stdout.toString()));
    const bodies = results.flatMap((r) => r.bodies as string[]);
    expect(results.flatMap((r) => r.errors)).toEqual([]);
    const served = bodies
      .filter((b) => b.startsWith('r'))
      .sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
    expect(served).toEqual(Array.from({ length: 600 }, (_, i) => `r${i + 1}`));
    expect(bodies.filter((b) => b.includes('shimkit_unmatched'))).toHaveLength(400);
    const log = api.requests();
    expect(log).toHaveLength(1000);
    expect(log.map((r) => r.seq)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    const claimed = log.map((r) => r.claimedBy).filter((c) => c !== null);
    expect(new Set(claimed).size).toBe(600);
    expect(claimed).toEqual(Array.from({ length: 600 }, (_, i) => `fifo#${i + 1}`));
    expect(log.filter((r) => r.claimedBy === null && r.response.status === 500)).toHaveLength(400);
    expect(() => api.assertDone()).not.toThrow();
  });
});

// The hostile review of agent playbooks (SPEC PB): each test is a finding,
// titled by what a user gets now that it is fixed (it failed before). Real
// sockets throughout (curl, fetch, the real openai and anthropic SDKs).
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { calls, InvalidOptionError, says, when } from '../../src/index.js';
import { matchers } from '../../src/matchers.js';
import { testDir } from '../helpers/index.js';
import { curl, nextTurn, server, slowWork } from '../helpers/server.js';

type Json = Record<string, unknown>;

function post(url: string, body: unknown): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
}

/** curl args that POST the raw text `body` as JSON. */
function curlPost(url: string, body: string): string[] {
  return ['-X', 'POST', '-H', 'content-type: application/json', '--data-binary', body, url];
}

/** The error message of a 500 in any of the endpoints' error shapes. */
async function errorMessage(response: Response): Promise<string> {
  const json = (await response.json()) as { error?: { message?: string } };
  return json.error?.message ?? '';
}

const DEEP = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;

describe('hostile bodies: one request must never take the server down (PB-02, PB-06, HT-12)', () => {
  it('PB-02 review: a tool result nested 20,000 deep (a 40 KB body) is answered, and the server serves every later request on any path', async () => {
    const api = await server({ strict: false });
    api.playbook([when('go', [calls('bash', { command: 'ls' }), says('done')])]);
    api.expect({ method: 'GET', path: '/health' }, { json: { ok: true } }, { times: 'always' });
    const url = `${api.url}/v1/chat/completions`;
    const first = await curl(
      curlPost(url, JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'go' }] })),
    );
    expect(first.code).toBe(0);
    // The agent answers the call with a (hostile) nested value as the tool message's content.
    const hostile = `{"model":"m","messages":[{"role":"user","content":"go"},{"role":"assistant","tool_calls":[{"id":"call_shimkit_p1_s1_1","type":"function","function":{"name":"bash","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_shimkit_p1_s1_1","content":${DEEP}}]}`;
    const deep = await curl(curlPost(url, hostile));
    const health = await curl([`${api.url}/health`]);
    // Before the fix: curl 52 "Empty reply from server" for both, and for every request after them.
    expect.soft(deep.code, String(deep.stderr)).toBe(0);
    expect(health.code, String(health.stderr)).toBe(0);
    expect(String(health.stdout)).toBe('{"ok":true}');
    expect(api.requests()).toHaveLength(3);
  });

  it("PB-06 review: a playbook's json match against a deeply nested body does not stop the claims: the FIFO takes it, and later requests are served", async () => {
    const api = await server({ strict: false });
    api.playbook([when('go', [says('x')])], { match: { json: { model: 'agent-a' } } });
    api.enqueue({ json: { from: 'fifo' } });
    api.expect({ method: 'GET', path: '/health' }, { json: { ok: true } }, { times: 'always' });
    const deep = await curl(
      curlPost(`${api.url}/v1/chat/completions`, `{"model":${DEEP},"messages":[]}`),
    );
    const health = await curl([`${api.url}/health`]);
    expect.soft(deep.code, String(deep.stderr)).toBe(0);
    expect(health.code, String(health.stderr)).toBe(0);
    expect(api.requests().map((r) => r.claimedBy)).toEqual(['fifo#1', 'expect#1']);
  });
});

describe('SDK retries (PB-01)', () => {
  it('PB-01 review: an SDK retry of a model request (client timeout while a .then() is slow) gets the same answer again and takes nothing', async () => {
    const api = await server({ strict: true });
    const play = api.playbook([
      when('go', [
        calls('bash', { command: 'ls' }).then(() => slowWork(800)),
        calls('bash', { command: 'pwd' }),
        says('done'),
      ]),
    ]);
    const client = new OpenAI({
      baseURL: `${api.url}/v1`,
      apiKey: 'k',
      timeout: 300,
      maxRetries: 2,
    });
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'go' }];
    const first = await client.chat.completions.create({ model: 'm', messages });
    const message = first.choices[0]?.message as OpenAI.ChatCompletionMessage;
    messages.push(message, {
      role: 'tool',
      tool_call_id: message.tool_calls?.[0]?.id ?? '',
      content: 'a.txt',
    });
    // The first try of this request times out in the SDK (the .then() takes 800 ms);
    // the SDK sends the same request again. It should get step 2's answer (the same bytes).
    const second = await client.chat.completions.create({ model: 'm', messages });
    expect(second.choices[0]?.message.tool_calls?.[0]).toMatchObject({
      id: 'call_shimkit_p1_s2_1',
      function: { name: 'bash', arguments: '{"command":"pwd"}' },
    });
    expect(api.requests()[2]?.headers['x-stainless-retry-count']).toBe('1');
    expect(play.toolCalls()).toHaveLength(2);
  });

  it('PB-01 review: a held playbook answer makes the SDK time out and retry (the way to test "the agent survives a slow model"); the retry gets the answer', async () => {
    const api = await server({ strict: true });
    const play = api.playbook([when('hi', [says('Hello!')])]);
    const held = api.hold({ path: '/v1/messages' });
    const client = new Anthropic({ baseURL: api.url, apiKey: 'k', timeout: 300, maxRetries: 1 });
    const answer = client.messages.create({
      model: 'claude-test',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi' }],
    });
    await held.waitReceived();
    let text: unknown;
    try {
      const message = await answer;
      text = message.content;
    } catch (error) {
      text = (error as Error).message; // before the fix: 500 "Playbook exhausted: consumed 1 of 1 …"
    }
    held.release();
    expect(text).toEqual([{ type: 'text', text: 'Hello!' }]);
    play.assertDone();
  });
});

describe('an exhausted playbook that something else answered (PB-05)', () => {
  it("PB-05 review: with unmatched: 'echo', a request after the last action is echoed and the playbook reports it exhausted", async () => {
    const api = await server({ unmatched: 'echo' });
    const play = api.playbook([when('go', [says('done')])]);
    const url = `${api.url}/v1/chat/completions`;
    expect(
      (await post(url, { model: 'm', messages: [{ role: 'user', content: 'go' }] })).status,
    ).toBe(200);
    const extra = await post(url, { model: 'm', messages: [{ role: 'user', content: 'again' }] });
    expect(extra.status).toBe(200); // the echo: the agent's SDK gets its own request back
    expect(() => play.assertDone()).toThrow(/Playbook exhausted/);
  });

  it('PB-05 review: with a recording cassette, a request after the last action is never passed to the upstream (a real, paid model API), and the playbook reports it', async () => {
    const upstream = await server();
    upstream.enqueue({ json: { from: 'upstream' } });
    const path = join(testDir(), 'agent.cassette.json');
    const api = await server({ cassette: { path, mode: 'record', upstream: upstream.url } });
    const play = api.playbook([when('go', [says('done')])]);
    const url = `${api.url}/v1/chat/completions`;
    await post(url, { model: 'm', messages: [{ role: 'user', content: 'go' }] });
    await post(url, { model: 'm', messages: [{ role: 'user', content: 'and again' }] });
    expect(upstream.requests()).toHaveLength(0);
    expect(() => play.assertDone()).toThrow(/Playbook exhausted/);
  });
});

describe('a done playbook with a predicate (PB-04, PB-06)', () => {
  it('PB-04 review: a done playbook with a predicate asks it no more (as a used-up expectation): with the thread blocked, the next request falls through to the FIFO at once', async () => {
    const api = await server({ timeoutMs: 1000 });
    api.playbook([when('go', [says('done')])], { match: { predicate: () => true } });
    api.enqueue({ json: { from: 'fifo' } });
    const url = `${api.url}/v1/chat/completions`;
    await post(url, { model: 'm', messages: [{ role: 'user', content: 'go' }] });
    const started = Date.now();
    const out = execFileSync(
      'curl',
      ['-sS', '--noproxy', '*', ...curlPost(url, '{"messages":[]}')],
      {
        encoding: 'utf8',
      },
    );
    expect(out).toBe('{"from":"fifo"}');
    expect(Date.now() - started).toBeLessThan(500);
  });
});

describe('turns (PB-02)', () => {
  it('PB-02 review: when() refuses actions after says(), which ends the turn (a new prompt would never be checked)', () => {
    expect(() => when('go', [says('first'), says('second')])).toThrow(InvalidOptionError);
    expect(() => when('go', [says('first'), calls('bash', {})])).toThrow(
      'Expected says() to be the last action of when("go"), got 1 more after action 1: says() ends the turn',
    );
  });

  it('PB-02 review: a turn that ends with calls(): the request carrying its results is refused saying the turn has no action left to answer them', async () => {
    const api = await server();
    api.playbook([when('one', [calls('bash', { command: 'ls' })]), when('two', [says('ok')])]);
    const url = `${api.url}/v1/chat/completions`;
    const messages: Json[] = [{ role: 'user', content: 'one' }];
    const first = (await (await post(url, { model: 'm', messages })).json()) as {
      choices: Array<{ message: Json }>;
    };
    messages.push(first.choices[0]?.message as Json, {
      role: 'tool',
      tool_call_id: 'call_shimkit_p1_s1_1',
      content: 'a.txt',
    });
    const results = await post(url, { model: 'm', messages });
    expect(results.status).toBe(500);
    // Before the fix: 'step 2 (turn 2: says("ok")) expected the prompt "two" … and it came as "one"'.
    expect(await errorMessage(results)).toMatch(/turn 1 has no action left/);
  });

  it('PB-02 review: a prompt mismatch shows a bounded part of the prompt: a 5 MB prompt gives a short 500 body, log error and assertDone() text', async () => {
    const api = await server();
    const play = api.playbook([when('go', [says('done')])]);
    const huge = 'x'.repeat(5_000_000);
    const refused = await post(`${api.url}/v1/chat/completions`, {
      model: 'm',
      messages: [{ role: 'user', content: huge }],
    });
    expect(refused.status).toBe(500);
    expect((await errorMessage(refused)).length).toBeLessThan(10_000);
    expect(api.requests()[0]?.error?.length).toBeLessThan(10_000);
    let report = '';
    try {
      play.assertDone();
    } catch (error) {
      report = (error as Error).message;
    }
    expect(report.length).toBeGreaterThan(0);
    expect(report.length).toBeLessThan(10_000);
    api.reset();
  });

  it('PB-02 review: a prompt that differs by a look-alike character (a no-break space) is refused naming the code points where it first differs', async () => {
    const api = await server();
    api.playbook([when('List files', [says('done')])]);
    const refused = await post(`${api.url}/v1/chat/completions`, {
      model: 'm',
      messages: [{ role: 'user', content: 'List\u00a0files' }],
    });
    const message = await errorMessage(refused);
    // Before the fix: 'expected the prompt "List files" … and it came as "List files"'.
    expect(message).toMatch(/U\+00A0|\\u00a0/i);
    api.reset();
  });
});

describe("the test's functions (PB-04)", () => {
  it('PB-04 review: a .then() whose promise never settles is reported as such, not as a thread blocked in execFileSync', async () => {
    const api = await server({ timeoutMs: 300 });
    api.playbook([
      when('go', [
        calls('bash', { command: 'ls' }).then(() => new Promise(() => {})),
        says('done'),
      ]),
    ]);
    const url = `${api.url}/v1/chat/completions`;
    const messages: Json[] = [{ role: 'user', content: 'go' }];
    const first = (await (await post(url, { model: 'm', messages })).json()) as {
      choices: Array<{ message: Json }>;
    };
    messages.push(first.choices[0]?.message as Json, {
      role: 'tool',
      tool_call_id: 'call_shimkit_p1_s1_1',
      content: 'a.txt',
    });
    const message = await errorMessage(await post(url, { model: 'm', messages }));
    expect(message).toContain('did not answer within 300 ms');
    expect(message).toMatch(/promise .*(did not settle|never settled|still pending)/);
    api.reset();
  });

  it('PB-04 review: with the thread blocked in execFileSync, a .then() the worker gave up on (the agent got its 500) does not run afterwards', async () => {
    const api = await server({ timeoutMs: 300 });
    let ran = 0;
    const play = api.playbook([
      when('go', [
        calls('bash', { command: 'ls' }).then(() => {
          ran++;
        }),
        says('done'),
      ]),
    ]);
    const url = `${api.url}/v1/chat/completions`;
    const agent = `
      const post = (b) => fetch(${JSON.stringify(url)}, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(b) });
      const messages = [{ role: 'user', content: 'go' }];
      const first = await (await post({ model: 'm', messages })).json();
      messages.push(first.choices[0].message, { role: 'tool', tool_call_id: 'call_shimkit_p1_s1_1', content: 'a.txt' });
      console.log((await post({ model: 'm', messages })).status);`;
    const status = execFileSync(process.execPath, ['--input-type=module', '-e', agent], {
      encoding: 'utf8',
    });
    expect(status.trim()).toBe('500');
    expect(ran).toBe(0);
    play.toolResults(); // a read drains the stale question, and the worker's drop of it
    await nextTurn();
    expect(ran).toBe(0); // before the fix: 1, run after the request it was for had failed
    api.reset();
  });

  it('PB-04 review: a .then() on a call whose result never comes fails isDone, assertDone() and waitDone() (its assertions never ran)', async () => {
    const api = await server({ strict: true });
    let ran = 0;
    const play = api.playbook([
      when('go', [says('hi')]),
      when('submit it', [
        calls('submit', { answer: 42 }).then((result) => {
          ran++;
          expect(result.text).toBe('accepted');
        }),
      ]),
    ]);
    const url = `${api.url}/v1/chat/completions`;
    await post(url, { model: 'm', messages: [{ role: 'user', content: 'go' }] });
    await post(url, {
      model: 'm',
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: 'hi' },
        { role: 'user', content: 'submit it' },
      ],
    });
    // The agent ends on the submit call (sending its result would only get "Playbook exhausted").
    await expect(play.waitDone()).rejects.toThrow(
      /The \.then\(\) of calls\("submit"\) at step 2 .* never ran/,
    );
    expect(ran).toBe(0);
    expect(play.isDone).toBe(false); // before the fix: true, though the .then() and its expect() never ran
    expect(() => play.assertDone()).toThrow(/\.then\(\)/);
  });

  it('PB-04 review: params whose toJSON gives a string are refused; a null-prototype object is accepted', async () => {
    const api = await server();
    api.playbook([when('go', [calls('bash', () => ({ toJSON: () => 'str' })), says('x')])]);
    const stringInput = await post(`${api.url}/v1/messages`, {
      model: 'm',
      max_tokens: 5,
      messages: [{ role: 'user', content: 'go' }],
    });
    expect.soft(stringInput.status).toBe(500); // before the fix: 200 with a tool_use whose input is "str"
    api.reset();
    api.playbook([
      when('go', [calls('bash', () => Object.assign(Object.create(null), { a: 1 })), says('x')]),
    ]);
    const nullProto = await post(`${api.url}/v1/messages`, {
      model: 'm',
      max_tokens: 5,
      messages: [{ role: 'user', content: 'go' }],
    });
    expect(nullProto.status).toBe(200);
    api.reset();
  });
});

describe('records and matchers (PB-03)', () => {
  it('PB-03 review: two results for one call are refused (as the Messages API refuses them)', async () => {
    const api = await server();
    const play = api.playbook([when('go', [calls('read', { path: 'a' }), says('ok')])]);
    const url = `${api.url}/v1/messages`;
    await post(url, { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'go' }] });
    const twice = await post(url, {
      model: 'm',
      max_tokens: 5,
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_shimkit_p1_s1_1', name: 'read', input: {} }],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_shimkit_p1_s1_1', content: 'first' },
            { type: 'tool_result', tool_use_id: 'toolu_shimkit_p1_s1_1', content: 'second' },
          ],
        },
      ],
    });
    const results = play.toolResults().map((r) => r.text);
    // Either refused (as the real API) or both kept; before the fix: 200 and ['second'].
    expect(twice.status === 500 || results.length === 2, JSON.stringify(results)).toBe(true);
    api.reset();
  });

  it('PB-03 review: toHaveReceivedToolResult with a /g RegExp matches every time (its lastIndex is not kept)', async () => {
    const api = await server();
    const play = api.playbook([when('go', [calls('a', {}), calls('b', {}), says('x')])]);
    const url = `${api.url}/v1/chat/completions`;
    const messages: Json[] = [{ role: 'user', content: 'go' }];
    for (const id of ['call_shimkit_p1_s1_1', 'call_shimkit_p1_s2_1']) {
      const answer = (await (await post(url, { model: 'm', messages })).json()) as {
        choices: Array<{ message: Json }>;
      };
      messages.push(answer.choices[0]?.message as Json, {
        role: 'tool',
        tool_call_id: id,
        content: 'ok',
      });
    }
    await post(url, { model: 'm', messages });
    const ok = /ok/g;
    expect(matchers.toHaveReceivedToolResult(play, 'a', ok).pass).toBe(true);
    expect(matchers.toHaveReceivedToolResult(play, 'b', ok).pass).toBe(true);
  });
});

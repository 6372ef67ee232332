// The second hostile review of agent playbooks (SPEC PB): each test is a
// finding, titled by the behaviour a user gets now that it is fixed (each
// failed before its fix). Real sockets throughout (fetch, raw http, the real SDKs, curl).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { calls, reply, says, when } from '../../src/index.js';
import { matchers } from '../../src/matchers.js';
import { CLI, shimkit, shimkitOk } from '../cli/helpers.js';
import { serveDetached, serverTestDir } from '../cli/server-helpers.js';
import { runCommand, testDir } from '../helpers/index.js';
import { server, slowWork } from '../helpers/server.js';

type Json = Record<string, unknown>;

function post(url: string, body: unknown): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
}

/** POST `body` on a connection of its own, and destroy that connection once `abortWhen` resolves (the client gave up). */
function postThenAbort(url: string, body: string, abortWhen: Promise<unknown>): Promise<void> {
  return new Promise((done) => {
    const req = http.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      agent: false,
    });
    req.on('error', () => done());
    req.on('response', (res) => {
      res.on('data', () => {});
      res.on('end', () => done());
      res.on('error', () => done());
    });
    req.end(body);
    void abortWhen.then(() => {
      req.destroy();
      setTimeout(done, 50);
    });
  });
}

/** Poll `read` until it is true (deadline 5 s). */
async function until(read: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!read()) {
    if (Date.now() > deadline) throw new Error(`still not ${what} after 5 s`);
    await slowWork(10);
  }
}

async function textOf(response: Response): Promise<string> {
  const json = (await response.json()) as {
    choices?: Array<{ message: { content: string | null } }>;
    error?: { message?: string };
  };
  return json.choices?.[0]?.message.content ?? `error: ${json.error?.message}`;
}

describe('the retry rule (PB-01)', () => {
  it('PB-01 review 2: two agents that send the same first request at once to a pool of playbooks with one match each get a playbook of their own (a live client is not retrying)', async () => {
    const api = await server({ strict: true });
    const first = api.playbook([when('hi', [says('first')])]);
    const second = api.playbook([when('hi', [says('second')])], { name: 'second' });
    // The first answer is slow to go out (a hold stands for a slow write or a busy worker).
    const held = api.hold();
    const url = `${api.url}/v1/chat/completions`;
    const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
    const a = post(url, body);
    await held.waitReceived();
    const b = post(url, body); // another agent, same prompt, its client alive
    await until(() => api.requests().length === 2, 'two requests');
    held.release();
    const texts = [await textOf(await a), await textOf(await b)].sort();
    // Before the fix: ['first', 'first'] — the second agent's request is taken as a "retry" of the first.
    expect(texts).toEqual(['first', 'second']);
    expect(api.requests().map((r) => r.claimedBy)).toEqual(['playbook#1', 'second']);
    first.assertDone();
    second.assertDone();
  });

  it('PB-01 review 2: a second live agent that sends the same first request to one playbook while the first answer is on its way is refused (not handed a copy of the same tool call)', async () => {
    const api = await server({ strict: false });
    let go: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      go = resolve;
    });
    const play = api.playbook([
      when('go', [
        calls('bash', async () => {
          await gate;
          return { command: 'ls' };
        }),
        says('done'),
      ]),
    ]);
    const url = `${api.url}/v1/chat/completions`;
    const body = { model: 'm', messages: [{ role: 'user', content: 'go' }] };
    const a = post(url, body);
    await until(() => play.consumed === 1, 'step 1 taken');
    const b = post(url, body);
    await until(() => api.requests().length === 2, 'two requests');
    go();
    const [ra, rb] = [await a, await b];
    expect(ra.status).toBe(200);
    // Before the fix: 200 with call_shimkit_p1_s1_1 again; two agents now share one conversation silently.
    expect(rb.status).toBe(500);
    expect(() => play.assertDone()).toThrow(/step 2/);
  });

  it('PB-01 review 2: the same body a third time, after the retry got the answer whole, is a new conversation that takes the next step (as isRetry() documents)', async () => {
    const api = await server({ strict: true });
    const play = api.playbook([when('hi', [says('hello')]), when('hi', [says('hello again')])]);
    const held = api.hold();
    const url = `${api.url}/v1/chat/completions`;
    const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    // Try 1: the client gives up while the answer is held, then the hold lets go to a dead socket.
    await postThenAbort(url, body, held.waitReceived());
    held.release();
    await until(() => api.requests()[0]?.response.endedAt !== undefined, 'try 1 ended');
    // Try 2 (the retry): the same answer, whole.
    expect(await textOf(await post(url, body))).toBe('hello');
    expect(play.consumed).toBe(1);
    // A new run of the one-shot agent, same prompt: turn 2.
    const third = await textOf(await post(url, body));
    expect(third).toBe('hello again'); // before the fix: 'hello' again, and turn 2 is never taken
    play.assertDone();
  });
});

describe('the retry rule, with a hold released with a replacement (PB-01, HT-06)', () => {
  it("PB-01 review 2: a playbook answer held and replaced by a 429 (release(reply.status(429))): the SDK's retry gets step 1's answer, not a refusal for step 2", async () => {
    const api = await server({ strict: true });
    const play = api.playbook([when('hi', [says('Hello!')])]);
    const held = api.hold({ path: '/v1/chat/completions' });
    const client = new OpenAI({ baseURL: `${api.url}/v1`, apiKey: 'k', maxRetries: 1 });
    const answer = client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
    });
    await held.waitReceived();
    held.release(reply.status(429, { retryAfterMs: 1 }));
    let text: unknown;
    try {
      text = (await answer).choices[0]?.message.content;
    } catch (error) {
      // Before the fix: 500 "Playbook exhausted: consumed 1 of 1 actions …": the 429 was "the answer, whole".
      text = (error as Error).message;
    }
    expect(api.requests()[1]?.headers['x-stainless-retry-count']).toBe('1');
    expect(text).toBe('Hello!');
    play.assertDone();
  });
});

/** curl, synchronously: the test's thread is blocked until it exits. */
function curlSync(args: string[]): string {
  return execFileSync('curl', ['-sS', '--noproxy', '*', '--max-time', '10', ...args], {
    encoding: 'utf8',
  });
}

describe('the ask handshake (HT-04, PB-04)', () => {
  it('HT-04 review 2: a response function the worker gave up on while the thread was blocked is not run late, even when the test awaits (the events come by the listener, not a synchronous read)', async () => {
    const api = await server({ timeoutMs: 200 });
    let ran = 0;
    api.expect(
      { path: '/fn' },
      () => {
        ran++;
        return { text: 'too late' };
      },
      { name: 'live' },
    );
    const out = curlSync([`${api.url}/fn`]);
    expect(out).toContain('did not answer within 200 ms');
    await slowWork(100); // no shimkit read in between: an ordinary await
    expect(ran).toBe(0); // before the fix: 1 — the question is run before its drop is applied
  });

  it('HT-04 review 2: the unmatched function the worker gave up on while the thread was blocked is not run late', async () => {
    let ran = 0;
    const api = await server({
      timeoutMs: 200,
      unmatched: () => {
        ran++;
        return { text: 'late' };
      },
    });
    curlSync([`${api.url}/other`]);
    await slowWork(100);
    expect(ran).toBe(0);
  });

  it('PB-04 review 2: a .then() the worker gave up on while the thread was blocked is not run late, even when the test awaits', async () => {
    const api = await server({ timeoutMs: 200 });
    let ran = 0;
    api.playbook([
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
    await slowWork(100);
    expect(ran).toBe(0);
  });

  it('HT-04 review 2: a predicate that ran but did not return in time (it blocks the thread itself) is not said to have returned a promise that did not settle', async () => {
    const api = await server({ timeoutMs: 200 });
    api.expect(
      {
        path: '/p',
        predicate: () => {
          execFileSync('sleep', ['0.5']); // the predicate itself blocks the thread
          return true;
        },
      },
      { text: 'ok' },
      { name: 'pred' },
    );
    const response = await post(`${api.url}/p`, {});
    const message = ((await response.json()) as { error: { message: string } }).error.message;
    expect(message).toContain('did not answer within 200 ms');
    // Before the fix: "It ran on the test's thread, and the promise it returned did not settle" — a predicate returns no promise.
    expect(message).not.toMatch(/promise it returned/);
  });

  it('HT-04 review 2: a response function that blocks the thread itself (execFileSync inside it) is not said to have returned a promise that did not settle', async () => {
    const api = await server({ timeoutMs: 200 });
    api.expect(
      { path: '/fn' },
      () => {
        execFileSync('sleep', ['0.5']);
        return { text: 'late' };
      },
      { name: 'sync' },
    );
    const message = (
      (await (await post(`${api.url}/fn`, {})).json()) as { error: { message: string } }
    ).error.message;
    expect(message).toContain('did not answer within 200 ms');
    expect(message).not.toMatch(/promise it returned/);
  });
});

describe('.then() reporting (PB-04)', () => {
  it('PB-04 review 2: isDone and assertDone() are not satisfied while a .then() is still running (its assertions have not run yet)', async () => {
    const api = await server({ strict: true });
    let readme: string | undefined;
    const play = api.playbook([
      when('go', [
        calls('read', { path: 'README.md' }).then(async (result) => {
          await slowWork(500);
          readme = result.text;
        }),
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
      content: '# hello',
    });
    const second = post(url, { model: 'm', messages });
    second.catch(() => {}); // a failed assertion below disposes the server first
    await until(() => play.consumed === 2, 'step 2 taken');
    // The .then() is running: readme is not set yet.
    expect(readme).toBeUndefined();
    expect(play.isDone).toBe(false); // before the fix: true ("every .then() ran")
    expect(() => play.assertDone()).toThrow(/\.then\(\)/);
    await second;
    expect(readme).toBe('# hello');
    expect(play.isDone).toBe(true);
  });
});

describe('records of hostile tool results (PB-03)', () => {
  /** The request that answers call_shimkit_p1_s1_1 with `content` (raw JSON text). */
  function resultBody(content: string): string {
    return `{"model":"m","messages":[{"role":"user","content":"go"},{"role":"assistant","tool_calls":[{"id":"call_shimkit_p1_s1_1","type":"function","function":{"name":"bash","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_shimkit_p1_s1_1","content":${content}}]}`;
  }

  it('PB-03 review 2: a tool result nested 6,000 deep (a 12 KB body) is recorded (its content replaced by a note), not silently lost: toolResults() has it and a .then() gets it', async () => {
    const api = await server({ strict: true, timeoutMs: 1000 });
    const seen: string[] = [];
    const play = api.playbook([
      when('go', [
        calls('bash', { command: 'ls' }).then((r) => void seen.push(r.toolCallId)),
        says('done'),
      ]),
    ]);
    const url = `${api.url}/v1/chat/completions`;
    await post(url, { model: 'm', messages: [{ role: 'user', content: 'go' }] });
    const deep = `${'['.repeat(6000)}${']'.repeat(6000)}`;
    const response = await post(url, resultBody(deep));
    // Before the fix: the worker serializes the record (its stack is 4 MB) and the test's thread cannot
    // deserialize it (a 'messageerror' nobody listens for): the news and the .then()'s question
    // are dropped, the .then() "times out" with the text of a thread blocked in execFileSync
    // (a 500 for the agent), and toolResults() is [].
    expect(response.status).toBe(200);
    expect(seen).toEqual(['call_shimkit_p1_s1_1']);
    expect(play.toolResults()).toHaveLength(1);
  });

  it('PB-03 review 2: toolResults() does not throw on a tool result nested 2,500 deep (its copy for the caller)', async () => {
    const api = await server({ strict: true });
    const play = api.playbook([when('go', [calls('bash', { command: 'ls' }), says('done')])]);
    const url = `${api.url}/v1/chat/completions`;
    await post(url, { model: 'm', messages: [{ role: 'user', content: 'go' }] });
    const deep = `${'['.repeat(2500)}${']'.repeat(2500)}`;
    expect((await post(url, resultBody(deep))).status).toBe(200);
    // Before the fix: RangeError: Maximum call stack size exceeded, from toolResults(), toolResultsFor(),
    // toHaveReceivedToolResult, and `shimkit tool-results` (its control answer fails).
    expect(() => play.toolResults()).not.toThrow();
    expect(play.toolResults()).toHaveLength(1);
  });
});

describe('what the docs say (PB-05)', () => {
  it('PB-05 review 2: the README\'s quoted "Playbook exhausted" text is what the server prints for its example\'s playbook', async () => {
    const readme = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');
    const quoted = /A request after the last action gets "(Playbook exhausted:[^…]*)…"/.exec(
      readme,
    )?.[1];
    expect(quoted, 'the quote in the README').toBeDefined();
    const api = await server();
    api.playbook([
      when('Is my branch pushed?', [
        calls('bash', { command: 'git status -sb' }),
        calls('bash', { command: 'git push' }),
        says('It was 1 commit ahead of origin; I pushed it.'),
      ]),
    ]);
    const url = `${api.url}/v1/chat/completions`;
    const messages: Json[] = [{ role: 'user', content: 'Is my branch pushed?' }];
    for (const id of ['call_shimkit_p1_s1_1', 'call_shimkit_p1_s2_1', undefined]) {
      const answer = (await (await post(url, { model: 'm', messages })).json()) as {
        choices: Array<{ message: Json }>;
      };
      messages.push(answer.choices[0]?.message as Json);
      if (id) messages.push({ role: 'tool', tool_call_id: id, content: 'ok' });
      else messages.push({ role: 'user', content: 'and now?' });
    }
    const extra = (await (await post(url, { model: 'm', messages })).json()) as {
      error: { message: string };
    };
    const words = (text: string) => text.replace(/\s+/g, ' ').trim();
    expect(words(extra.error.message)).toContain(words(quoted ?? '-'));
    api.reset();
  });
});

describe('the CLI (PB-07)', () => {
  it('PB-07 review 2: `shimkit serve --playbook <(…) --detach` (bash process substitution) starts the server with that playbook, or says the detached server cannot read a pipe (not "is not JSON")', async () => {
    const dir = join(serverTestDir(), 'api');
    const playbook = '{"turns":[{"when":"hi","do":[{"says":"Hello!"}]}]}';
    const script = `"${process.execPath}" "${CLI}" serve --dir "$0" --playbook <(printf '%s' '${playbook}') --detach`;
    const r = await runCommand('bash', ['-c', script, dir]);
    const out = r.stdout.toString() + r.stderr.toString();
    // Before the fix: exit 2, "the playbook /dev/fd/63 is not JSON (Unexpected end of JSON input)": the
    // detached server reads the pipe again, which the first read emptied.
    expect(out).not.toMatch(/is not JSON/);
    if (r.code !== 0) expect(out).toMatch(/pipe|regular file|process substitution/);
  });

  it('PB-07 review 2: `shimkit tool-calls` works when one tool result is nested 2,500 deep (one odd result does not break every record read)', async () => {
    const dir = join(serverTestDir(), 'api');
    const file = join(testDir(), 'pb.json');
    writeFileSync(
      file,
      '{"turns":[{"when":"go","do":[{"calls":"bash","params":{}},{"says":"ok"}]}]}',
    );
    const served = await serveDetached(dir, ['--playbook', file]);
    const url = `${served.url}/v1/chat/completions`;
    await post(url, { model: 'm', messages: [{ role: 'user', content: 'go' }] });
    const deep = `${'['.repeat(2500)}${']'.repeat(2500)}`;
    await post(
      url,
      `{"model":"m","messages":[{"role":"user","content":"go"},{"role":"assistant","tool_calls":[{"id":"call_shimkit_p1_s1_1","type":"function","function":{"name":"bash","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_shimkit_p1_s1_1","content":${deep}}]}`,
    );
    const calls = await shimkit(['tool-calls', dir]);
    // Before the fix: exit 1, "shimkit tool-calls: RangeError: Maximum call stack size exceeded" and a stack of serve.js.
    expect(calls.stderr.toString()).toBe('');
    expect(calls.stdout.toString()).toBe(
      'playbook#1 step 1 turn 1 #1 bash call_shimkit_p1_s1_1 {}\n',
    );
    await shimkitOk(['stop', dir]);
  });

  it('PB-07 review 2: a playbook file that is not UTF-8 is refused naming the file (not read with U+FFFD in its prompt, refusing the agent later)', async () => {
    const file = join(testDir(), 'latin1.json');
    writeFileSync(
      file,
      Buffer.concat([
        Buffer.from('{"turns":[{"when":"caf'),
        Buffer.from([0xe9]), // "é" in Latin-1
        Buffer.from('","do":[{"says":"y"}]}]}'),
      ]),
    );
    const dir = join(serverTestDir(), 'api');
    const r = await shimkit(['serve', '--dir', dir, '--playbook', file, '--detach']);
    if (r.code === 0) await shimkitOk(['stop', dir]);
    // Before the fix: exit 0; the prompt is "caf\uFFFD" and the agent's "café" is refused at its first request.
    expect(r.code).toBe(2);
    expect(r.stderr.toString()).toMatch(/UTF-8/);
  });
});

describe('toHaveReceivedToolResult (PB-03)', () => {
  it('PB-03 review 2: toHaveReceivedToolResult refuses an expectation it cannot check (a misspelt key, a number) instead of passing on any result', async () => {
    const api = await server();
    const play = api.playbook([when('go', [calls('bash', { command: 'ls' }), says('done')])]);
    const url = `${api.url}/v1/chat/completions`;
    await post(url, { model: 'm', messages: [{ role: 'user', content: 'go' }] });
    await post(url, {
      model: 'm',
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          tool_calls: [
            {
              id: 'call_shimkit_p1_s1_1',
              type: 'function',
              function: { name: 'bash', arguments: '{}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_shimkit_p1_s1_1', content: 'a.txt' },
      ],
    });
    expect(matchers.toHaveReceivedToolResult(play, 'bash', { isError: true }).pass).toBe(false);
    // Now both pass: the unknown key and the number are ignored, so any result of bash fits.
    const verdict = (expected: unknown): string => {
      try {
        return matchers.toHaveReceivedToolResult(play, 'bash', expected as never).pass
          ? 'pass'
          : 'fail';
      } catch {
        return 'refused';
      }
    };
    expect(verdict({ iserror: true })).not.toBe('pass');
    expect(verdict(42)).not.toBe('pass');
  });
});

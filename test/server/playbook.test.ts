// Agent playbooks through real agents (SPEC PB-01 … PB-05): a tool-calling
// agent with the real openai or anthropic SDK (test/fixtures/tool-agent.mjs)
// runs in its own process against the server, configured by nothing but
// api.env(), and runs its tools for real in a temp cwd. Cases that need many
// agents run side by side: each agent is a Node start plus an SDK.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  any,
  calls,
  type MockServer,
  PlaybookError,
  parallel,
  says,
  UnusedResponsesError,
  when,
} from '../../src/index.js';
import { testDir } from '../helpers/index.js';
import { type AgentOut, runAgent } from '../helpers/playbook.js';
import { server, slowWork } from '../helpers/server.js';

const AGENT = join(import.meta.dirname, '../fixtures/tool-agent.mjs');

type Api = 'chat' | 'responses' | 'messages';
type Mode = 'stream' | 'json' | 'helper';
const APIS: Api[] = ['chat', 'responses', 'messages'];
const MODES: Mode[] = ['stream', 'json', 'helper'];

/** Run the agent to its end in `cwd`; its JSON line (also when it failed). */
function agent(
  api: MockServer,
  format: Api,
  mode: Mode,
  prompts: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<AgentOut> {
  const flags = mode === 'json' ? [] : [`--${mode}`];
  const env = { ...api.env(), ...options.env };
  return runAgent(['--api', format, ...flags, ...prompts], { env, cwd: options.cwd ?? testDir() });
}

/** The diagnostic in an SDK's error message: the Anthropic SDK puts the whole JSON body there. */
function diagnostic(message: string | undefined): string {
  const json = /^\d{3} (\{.*)$/s.exec(message ?? '')?.[1];
  if (json === undefined) return message ?? '';
  return (JSON.parse(json) as { error: { message: string } }).error.message;
}

const PATHS: Record<Api, string> = {
  chat: '/v1/chat/completions',
  responses: '/v1/responses',
  messages: '/v1/messages',
};

/** A turn's first request in `format`, as an SDK sends it (not streamed). */
function firstRequest(format: Api, prompt: string): Record<string, unknown> {
  if (format === 'responses') return { model: 'm', input: prompt };
  const messages = [{ role: 'user', content: prompt }];
  return format === 'chat' ? { model: 'm', messages } : { model: 'm', max_tokens: 64, messages };
}

const idOf = (format: Api, key: string) =>
  `${format === 'messages' ? 'toolu' : 'call'}_shimkit_${key}`;

describe('a conversation played in every format (PB-01, PB-03, PB-04)', () => {
  it('PB-01 PB-03 PB-04 chat, Responses and Messages, streamed, in one body and through the SDK helper: calls, parallel calls, late-bound params and says, over two turns', async () => {
    const cases = APIS.flatMap((format) => MODES.map((mode) => ({ format, mode })));
    const played = await Promise.all(
      cases.map(async ({ format, mode }) => {
        const api = await server({ strict: true });
        const cwd = testDir();
        writeFileSync(join(cwd, 'a.txt'), 'alpha\n');
        writeFileSync(join(cwd, 'b.txt'), 'beta\n');
        let listing = '';
        const play = api.playbook([
          when('List the files', [
            calls('bash', { command: 'ls' }).then((r) => {
              listing = r.text;
            }),
            parallel(calls('read', { path: 'a.txt' }), calls('read', { path: 'b.txt' })),
            calls('write', () => ({ path: 'out.txt', content: listing })),
            says('Wrote the listing to out.txt.'),
          ]),
          when('Thanks', [says('You are welcome.')]),
        ]);
        const out = await agent(api, format, mode, ['List the files', 'Thanks'], { cwd });
        return { format, mode, api, play, out, cwd };
      }),
    );
    for (const { format, mode, api, play, out, cwd } of played) {
      const label = `${format} ${mode}`;
      expect(out.error, label).toBeNull();
      expect(
        out.turns.map((t) => t.text),
        label,
      ).toEqual(['Wrote the listing to out.txt.', 'You are welcome.']);
      expect(readFileSync(join(cwd, 'out.txt'), 'utf8'), label).toBe('a.txt\nb.txt\n');
      expect(
        out.turns[0]?.toolCalls.map((c) => [c.name, c.id, c.params]),
        label,
      ).toEqual([
        ['bash', idOf(format, 'p1_s1_1'), { command: 'ls' }],
        ['read', idOf(format, 'p1_s2_1'), { path: 'a.txt' }],
        ['read', idOf(format, 'p1_s2_2'), { path: 'b.txt' }],
        ['write', idOf(format, 'p1_s3_1'), { path: 'out.txt', content: 'a.txt\nb.txt\n' }],
      ]);
      expect(play.toolCalls(), label).toEqual([
        {
          step: 1,
          turn: 1,
          toolName: 'bash',
          toolCallId: idOf(format, 'p1_s1_1'),
          params: { command: 'ls' },
          seq: 1,
        },
        {
          step: 2,
          turn: 1,
          toolName: 'read',
          toolCallId: idOf(format, 'p1_s2_1'),
          params: { path: 'a.txt' },
          seq: 2,
        },
        {
          step: 2,
          turn: 1,
          toolName: 'read',
          toolCallId: idOf(format, 'p1_s2_2'),
          params: { path: 'b.txt' },
          seq: 2,
        },
        {
          step: 3,
          turn: 1,
          toolName: 'write',
          toolCallId: idOf(format, 'p1_s3_1'),
          params: { path: 'out.txt', content: 'a.txt\nb.txt\n' },
          seq: 3,
        },
      ]);
      expect(
        play.toolResults().map((r) => [r.step, r.toolName, r.text, r.isError, r.seq]),
        label,
      ).toEqual([
        [1, 'bash', 'a.txt\nb.txt\n', false, 2],
        [2, 'read', 'alpha\n', false, 3],
        [2, 'read', 'beta\n', false, 3],
        [3, 'write', 'wrote 12 bytes', false, 4],
      ]);
      expect(
        play.toolResultsFor('read').map((r) => r.toolCallId),
        label,
      ).toEqual([idOf(format, 'p1_s2_1'), idOf(format, 'p1_s2_2')]);
      expect(play.turns(), label).toEqual([
        { turn: 1, prompt: 'List the files', seq: 1 },
        { turn: 2, prompt: 'Thanks', seq: 5 },
      ]);
      expect(play.consumed, label).toBe(5);
      expect(play.remaining(), label).toEqual([]);
      expect(
        api.requests().map((r) => [r.claimedBy, (r.json as { stream?: boolean }).stream === true]),
        label,
      ).toEqual(Array(5).fill(['playbook#1', mode !== 'json']));
      play.assertDone();
      api.assertDone();
    }
  });
});

describe('turn checks (PB-02)', () => {
  it('PB-02 a wrong prompt gets a 500 naming the step, what was expected and what came: the SDK reports it, the log and assertDone() say the same, nothing is taken', async () => {
    const runs = await Promise.all(
      APIS.map(async (format) => {
        const api = await server({ strict: true });
        const play = api.playbook([when('Deploy the app', [says('Deployed.')])]);
        const wrong = await agent(api, format, 'stream', ['Deploy the ap']);
        // The same step answers the next request that fits (the prompt is compared after trimming).
        const right = await fetch(`${api.url}${PATHS[format]}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(firstRequest(format, '  Deploy the app\n')),
        });
        return { format, api, play, wrong, right };
      }),
    );
    for (const { format, api, play, wrong, right } of runs) {
      const why =
        'step 1 (turn 1: says("Deployed.")) expected the prompt "Deploy the app" (compared after trimming) as its last user text, and it came as "Deploy the ap"';
      expect(wrong.error?.status, format).toBe(500);
      expect(diagnostic(wrong.error?.message), format).toContain(why);
      const [refused, answered] = api.requests();
      expect(refused?.response.status, format).toBe(500);
      expect(refused?.headers['x-stainless-retry-count'] ?? '0', format).toBe('0');
      expect(api.requests(), format).toHaveLength(2); // x-should-retry: false, no SDK retry
      expect(refused?.error, format).toContain(why);
      expect(refused?.error, format).toContain('Nothing was taken: the same step answers');
      expect(refused?.claimedBy, format).toBe('playbook#1');
      expect(right.status, format).toBe(200);
      expect(await right.text(), format).toContain('Deployed.');
      expect(answered?.response.status, format).toBe(200);
      expect(play.consumed, format).toBe(1);
      expect(() => play.assertDone(), format).toThrow(why);
      expect(() => api.assertDone(), format).toThrow(why);
      api.reset(); // the refusal is this test's point
    }
  });

  it('PB-02 a request without a result for each tool call of the answer before is refused, naming the call that has none', async () => {
    const api = await server({ strict: true });
    const play = api.playbook([
      when('go', [
        parallel(calls('read', { path: 'x' }), calls('read', { path: 'y' })),
        says('ok'),
      ]),
    ]);
    const post = (body: unknown) =>
      fetch(`${api.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const user = { role: 'user', content: 'go' };
    const first = (await (await post({ model: 'm', messages: [user] })).json()) as {
      choices: Array<{ message: { tool_calls: Array<{ id: string }> } }>;
    };
    const assistant = { role: 'assistant', tool_calls: first.choices[0]?.message.tool_calls };
    const half = await post({
      model: 'm',
      messages: [
        user,
        assistant,
        { role: 'tool', tool_call_id: 'call_shimkit_p1_s1_1', content: 'X' },
      ],
    });
    expect(half.status).toBe(500);
    expect(half.headers.get('x-should-retry')).toBe('false');
    const { error } = (await half.json()) as { error: { message: string } };
    expect(error.message).toContain(
      'playbook \'playbook#1\' refused POST /v1/chat/completions (request #2): step 2 (turn 1: says("ok")) expected a tool result for each call of the answer before (call_shimkit_p1_s1_1 (read), call_shimkit_p1_s1_2 (read)), and call_shimkit_p1_s1_2 (read) has none: it carries results for call_shimkit_p1_s1_1',
    );
    expect(play.consumed).toBe(1);
    const whole = await post({
      model: 'm',
      messages: [
        user,
        assistant,
        { role: 'tool', tool_call_id: 'call_shimkit_p1_s1_1', content: 'X' },
        {
          role: 'tool',
          tool_call_id: 'call_shimkit_p1_s1_2',
          content: [
            { type: 'text', text: 'Y' },
            { type: 'text', text: 'Z' },
          ],
        },
      ],
    });
    expect(whole.status).toBe(200);
    expect(play.toolResults().map((r) => [r.text, r.content, r.seq])).toEqual([
      ['X', 'X', 3],
      [
        'YZ',
        [
          { type: 'text', text: 'Y' },
          { type: 'text', text: 'Z' },
        ],
        3,
      ],
    ]);
    expect(() => api.assertDone()).toThrow(/call_shimkit_p1_s1_2 \(read\) has none/);
    api.reset();
  });

  it('PB-02 PB-03 Anthropic is_error comes through as isError; any() takes whatever prompt comes', async () => {
    const api = await server({ strict: true });
    const play = api.playbook([
      when(any(), [calls('bash', { command: 'exit 3' }), says('It failed.')]),
    ]);
    const out = await agent(api, 'messages', 'helper', ['whatever']);
    expect(out.turns[0]?.text).toBe('It failed.');
    expect(play.toolResults()).toMatchObject([
      { step: 1, turn: 1, toolName: 'bash', text: '\n(exit 3)', isError: true, seq: 2 },
    ]);
    expect(play.turns()).toEqual([{ turn: 1, prompt: 'whatever', seq: 1 }]);
  });
});

describe('functions and a blocked thread (PB-04)', () => {
  it('PB-04 a playbook without functions is served while the test thread is blocked in execFileSync', async () => {
    const api = await server({ strict: true });
    const play = api.playbook([
      when('hi', [calls('bash', { command: 'echo hello' }), says('Said hello.')]),
    ]);
    const cwd = testDir();
    const out = JSON.parse(
      execFileSync(process.execPath, [AGENT, '--api', 'chat', '--stream', 'hi'], {
        env: api.env(),
        cwd,
        encoding: 'utf8',
      }),
    ) as AgentOut;
    expect(out.turns[0]?.text).toBe('Said hello.');
    expect(play.toolResults()[0]?.text).toBe('hello\n'); // exact at once, no await in between
    play.assertDone();
  });

  it('PB-04 with functions, a blocked thread gets the timeout error that says why', async () => {
    const api = await server({ strict: true, timeoutMs: 300 });
    const play = api.playbook([
      when('hi', [calls('bash', { command: 'true' }).then(() => {}), says('done')]),
    ]);
    const cwd = testDir();
    let stdout = '';
    try {
      execFileSync(process.execPath, [AGENT, '--api', 'responses', 'hi'], {
        env: api.env(),
        cwd,
        encoding: 'utf8',
      });
    } catch (error) {
      stdout = (error as { stdout: string }).stdout;
    }
    const out = JSON.parse(stdout) as AgentOut;
    expect(out.error?.status).toBe(500);
    expect(out.error?.message).toContain(
      `the .then() of calls("bash") at step 1 of playbook 'playbook#1' for POST /v1/responses (request #2) did not answer within 300 ms. It runs on the test's thread: if that thread is blocked in execFileSync/spawnSync, run the program with spawn (or shimkit's run()) and await it`,
    );
    expect(() => play.assertDone()).toThrow(PlaybookError);
    await expect(api.dispose()).rejects.toThrow(UnusedResponsesError);
  });

  it('PB-04 .then() is awaited before the next answer, and late-bound params see what it set', async () => {
    const api = await server({ strict: true });
    const order: string[] = [];
    let token = '';
    api.playbook([
      when('start', [
        calls('bash', { command: 'echo TOKEN-42' }).then(async (r) => {
          await slowWork(100);
          token = r.text.trim();
          order.push('then');
        }),
        calls('bash', () => {
          order.push('params');
          return { command: `echo got ${token}` };
        }),
        says('ok'),
      ]),
    ]);
    const out = await agent(api, 'messages', 'stream', ['start']);
    expect(order).toEqual(['then', 'params']);
    expect(out.turns[0]?.toolCalls.map((c) => c.result)).toEqual(['TOKEN-42\n', 'got TOKEN-42\n']);
  });

  it('PB-04 a .then() that throws ends the playbook: the request gets a 500 with its error, later ones are refused', async () => {
    const api = await server({ strict: true });
    const play = api.playbook([
      when('start', [
        calls('bash', { command: 'true' }).then(() => {
          throw new Error('the plan id is missing');
        }),
        says('never'),
      ]),
    ]);
    const out = await agent(api, 'chat', 'json', ['start']);
    expect(out.error?.message).toContain(
      `the .then() of calls("bash") at step 1 of playbook 'playbook#1' failed for POST /v1/chat/completions (request #2): the plan id is missing`,
    );
    expect(() => play.assertDone()).toThrow(/the plan id is missing/);
    api.reset();
  });
});

describe('diagnostics (PB-05)', () => {
  it('PB-05 a request after the last action: "Playbook exhausted" with the last consumed action and the request that asked for more', async () => {
    const api = await server({ strict: true });
    const play = api.playbook([when('go', [calls('bash', { command: 'ls' })])]);
    const out = await agent(api, 'chat', 'stream', ['go']);
    const text =
      'Playbook exhausted: consumed 1 of 1 action (playbook \'playbook#1\'); last consumed: calls("bash", {"command":"ls"}) at step 1 (turn 1). Then POST /v1/chat/completions (request #2) asked for more; its last message: tool result for call_shimkit_p1_s1_1:';
    expect(out.error?.message).toContain(text);
    expect(api.requests()[1]?.error).toContain(text);
    expect(api.requests()[1]?.claimedBy).toBeNull();
    expect(() => play.assertDone()).toThrow(text);
    expect(() => api.assertDone()).toThrow(text);
    api.reset();
  });

  it('PB-05 actions left: "Playbook not fully consumed" with what remains, from assertDone() and a strict dispose()', async () => {
    const api = await server({ strict: true });
    const play = api.playbook([
      when('go', [calls('write', { path: 'out.txt', content: 'hello' }), says('Done writing.')]),
      when('more', [says('bye')]),
    ]);
    await fetch(`${api.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'm',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'go' }],
      }),
    });
    expect(play.remaining()).toEqual([
      { step: 2, turn: 1, describe: 'says("Done writing.")' },
      { step: 3, turn: 2, describe: 'says("bye")' },
    ]);
    const text = `Playbook not fully consumed: consumed 1 of 3 actions (playbook 'playbook#1'); remaining:
  - says("Done writing.") (step 2, turn 1)
  - says("bye") (step 3, turn 2)`;
    expect(() => play.assertDone()).toThrow(text);
    await expect(api.dispose()).rejects.toThrow(/Playbook not fully consumed: consumed 1 of 3/);
  });

  it('PB-05 expectations and the FIFO take what the playbook does not fit; an earlier expectation wins', async () => {
    const api = await server({ strict: true });
    api.expect({ method: 'GET', path: '/v1/models' }, { json: { data: [] } }, { name: 'models' });
    api.expect(
      { path: '/v1/chat/completions', headers: { 'x-agent': 'other' } },
      { json: {} },
      { name: 'other' },
    );
    const play = api.playbook([when('go', [says('hi')])]);
    api.enqueue({ json: { from: 'fifo' } });
    const models = await fetch(`${api.url}/v1/models`);
    expect(await models.json()).toEqual({ data: [] });
    const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'go' }] });
    const post = (headers: Record<string, string>) =>
      fetch(`${api.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
    expect(await (await post({ 'x-agent': 'other' })).json()).toEqual({});
    expect((await post({})).status).toBe(200);
    expect(await (await post({})).json()).toEqual({ from: 'fifo' }); // the playbook is done: falls through
    expect(api.requests().map((r) => r.claimedBy)).toEqual([
      'models',
      'other',
      'playbook#1',
      'fifo#1',
    ]);
    play.assertDone();
    api.assertDone();
  });
});

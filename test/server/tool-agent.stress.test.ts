// The programs under test of the agent playbooks (PB-01, PB-08), proved
// against hand-scripted answers: test/fixtures/tool-agent.mjs (three wire
// formats; streamed and assembled by hand, through the SDKs' helpers, or one
// JSON body) and examples/agent/tool-agent.mjs each run for real in their own
// process, configured by api.env(), in a temp cwd. A test checks the agent's
// report and what the server received: each tool result in the next request,
// tied to its call's id, in the order of the calls; the history growing by
// prefix across requests and turns. The cases of a test run side by side.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type LoggedRequest, type MockServerResponse, reply, sse } from '../../src/index.js';
import { runCommand, testDir } from '../helpers/index.js';
import type { AgentOut } from '../helpers/playbook.js';
import { server } from '../helpers/server.js';

const AGENT = join(import.meta.dirname, '../fixtures/tool-agent.mjs');
const EXAMPLE = join(import.meta.dirname, '../../examples/agent/tool-agent.mjs');

/** One scripted tool call and the result the agent must send back for it. */
interface Call {
  id: string;
  name: string;
  params: Record<string, unknown>;
  /** The arguments in these pieces (their concatenation is `params`' compact JSON). */
  pieces?: string[];
  result: string;
  isError?: boolean;
}

/** One scripted model answer: tool calls (in one message), or text that ends the turn. */
type Answer = { calls: Call[] } | { says: string[] };

/** A wire format: how the server answers, and the history items the agent must send. */
interface Format {
  api: 'chat' | 'responses' | 'messages';
  path: string;
  answer(answer: Answer): MockServerResponse;
  /** The request's history: `messages` or `input`. */
  history(json: Record<string, unknown>): unknown[];
  toolNames(json: Record<string, unknown>): string[];
  user(text: string): unknown[];
  calls(calls: Call[]): unknown[];
  results(calls: Call[]): unknown[];
  says(text: string): unknown[];
}

const args = (c: Call) => c.pieces ?? c.params;
const text = (a: Answer) => ('says' in a ? a.says : []);
const calls = (a: Answer) => ('calls' in a ? a.calls : []);
const json = (r: LoggedRequest | undefined) => (r?.json ?? {}) as Record<string, unknown>;
const named = (tools: unknown, key: (t: never) => string) => (tools as never[]).map(key);

const chatWire = {
  api: 'chat',
  path: '/v1/chat/completions',
  history: (j: Record<string, unknown>) => j.messages as unknown[],
  toolNames: (j: Record<string, unknown>) =>
    named(j.tools, (t: { function: { name: string } }) => t.function.name),
  user: (t: string) => [{ role: 'user', content: t }],
  calls: (cs: Call[]) => [
    {
      role: 'assistant',
      content: null,
      tool_calls: cs.map((c) => ({
        id: c.id,
        type: 'function',
        function: { name: c.name, arguments: JSON.stringify(c.params) },
      })),
    },
  ],
  results: (cs: Call[]) => cs.map((c) => ({ role: 'tool', tool_call_id: c.id, content: c.result })),
  says: (t: string) => [{ role: 'assistant', content: t }],
} as const;

/** A non-streamed chat.completion body, as the API sends it. */
function completion(a: Answer): Record<string, unknown> {
  const cs = calls(a);
  const toolCalls = cs.map((c) => ({
    id: c.id,
    type: 'function',
    function: { name: c.name, arguments: JSON.stringify(c.params) },
  }));
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 1700000000,
    model: 'gpt-test',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: cs.length > 0 ? null : text(a).join(''),
          refusal: null,
          ...(cs.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: cs.length > 0 ? 'tool_calls' : 'stop',
      },
    ],
    usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
  };
}

const FORMATS: Record<'chat' | 'chatJson' | 'responses' | 'messages', Format> = {
  chat: {
    ...chatWire,
    answer: (a) =>
      sse.chat(text(a), {
        toolCalls: calls(a).map((c) => ({ id: c.id, name: c.name, arguments: args(c) })),
      }),
  },
  chatJson: { ...chatWire, answer: (a) => reply.json(completion(a)) },
  responses: {
    api: 'responses',
    path: '/v1/responses',
    answer: (a) =>
      sse.responses(text(a), {
        functionCalls: calls(a).map((c) => ({
          callId: c.id,
          id: `fc_${c.id}`,
          name: c.name,
          arguments: args(c),
        })),
      }),
    history: (j) => j.input as unknown[],
    toolNames: (j) => named(j.tools, (t: { name: string }) => t.name),
    user: (t) => [{ role: 'user', content: t }],
    calls: (cs) =>
      cs.map((c) => ({
        type: 'function_call',
        id: `fc_${c.id}`,
        call_id: c.id,
        name: c.name,
        arguments: JSON.stringify(c.params),
      })),
    results: (cs) =>
      cs.map((c) => ({ type: 'function_call_output', call_id: c.id, output: c.result })),
    says: (t) => [{ role: 'assistant', content: t }],
  },
  messages: {
    api: 'messages',
    path: '/v1/messages',
    answer: (a) =>
      sse.messages(text(a), {
        toolUse: calls(a).map((c) => ({ id: c.id, name: c.name, input: args(c) })),
      }),
    history: (j) => j.messages as unknown[],
    toolNames: (j) => named(j.tools, (t: { name: string }) => t.name),
    user: (t) => [{ role: 'user', content: t }],
    calls: (cs) => [
      {
        role: 'assistant',
        content: cs.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.params })),
      },
    ],
    results: (cs) => [
      {
        role: 'user',
        content: cs.map((c) => ({
          type: 'tool_result',
          tool_use_id: c.id,
          content: c.result,
          ...(c.isError ? { is_error: true } : {}),
        })),
      },
    ],
    says: (t) => [{ role: 'assistant', content: [{ type: 'text', text: t }] }],
  },
};

/** What each request must carry: the history so far, growing by prefix. */
function histories(format: Format, prompts: string[], answers: Answer[]): unknown[][] {
  const out: unknown[][] = [];
  const history = [...format.user(prompts[0] ?? '')];
  let turn = 0;
  for (const a of answers) {
    out.push([...history]);
    if ('calls' in a) {
      history.push(...format.calls(a.calls), ...format.results(a.calls));
    } else {
      history.push(...format.says(a.says.join('')));
      turn += 1;
      if (turn < prompts.length) history.push(...format.user(prompts[turn] ?? ''));
    }
  }
  return out;
}

interface Conversation {
  prompts: string[];
  answers: Answer[];
  /** Files made in the cwd before the agent starts. */
  files?: Record<string, string>;
  /** Files the cwd must hold after. */
  made?: Record<string, string>;
}

/**
 * Run tool-agent.mjs with `flags` on a conversation scripted in `format`; check
 * its report, every request's history and tools, and the files it made; the requests.
 */
async function converse(
  format: Format,
  flags: string[],
  c: Conversation,
): Promise<LoggedRequest[]> {
  const api = await server({ strict: true });
  api.enqueue(c.answers.map((a) => format.answer(a)));
  const cwd = testDir('shimkit-agent-');
  for (const [file, content] of Object.entries(c.files ?? {})) {
    writeFileSync(join(cwd, file), content);
  }
  const agentId = `${format.api}${flags.join('')}`;
  const r = await runCommand(
    process.execPath,
    [AGENT, '--api', format.api, ...flags, ...c.prompts],
    {
      env: { ...api.env(), AGENT_ID: agentId },
      cwd,
    },
  );
  const where = `${agentId}: ${r.stderr}`;
  expect(r.code, where).toBe(0);
  const stdout = r.stdout.toString();
  expect(stdout.endsWith('\n') && stdout.split('\n').length === 2, stdout).toBe(true);

  // The report: per turn its prompt, final text and every tool call with its result.
  const turns = c.prompts.map((prompt) => ({ prompt, text: '', toolCalls: [] as unknown[] }));
  let turn = 0;
  for (const a of c.answers) {
    const t = turns[turn];
    if (!t) break;
    if ('says' in a) {
      t.text = a.says.join('');
      turn += 1;
    } else {
      for (const call of a.calls) {
        const { name, id, params, result, isError = false } = call;
        t.toolCalls.push({ name, id, params, result, isError });
      }
    }
  }
  expect(JSON.parse(stdout), where).toEqual({ turns, error: null });

  // The wire: one request per answer, each with the whole history so far.
  const requests = api.requests();
  expect(
    requests.map((q) => [q.method, q.path]),
    where,
  ).toEqual(c.answers.map(() => ['POST', format.path]));
  expect(
    requests.map((q) => format.history(json(q))),
    where,
  ).toEqual(histories(format, c.prompts, c.answers));
  const streamed = flags.includes('--stream') || flags.includes('--helper') ? true : undefined;
  for (const q of requests) {
    expect(json(q).stream, where).toBe(streamed);
    expect(format.toolNames(json(q)), where).toEqual(['bash', 'read', 'write']);
    expect(q.headers['x-agent'], where).toBe(agentId);
  }
  for (const [file, content] of Object.entries(c.made ?? {})) {
    expect(readFileSync(join(cwd, file), 'utf8'), where).toBe(content);
  }
  api.assertDone();
  return requests;
}

/** One turn: two calls in one message (bash makes a file, write another), then a read, then text. */
const MAKE_NOTES: Conversation = {
  prompts: ['Make two notes and read the first'],
  answers: [
    {
      calls: [
        {
          id: 'call_a',
          name: 'bash',
          params: { command: 'printf hi > a.txt && echo made' },
          result: 'made\n',
        },
        {
          id: 'call_b',
          name: 'write',
          params: { path: 'notes/b.txt', content: 'two' },
          result: 'wrote 3 bytes',
        },
      ],
    },
    {
      calls: [
        {
          id: 'call_c',
          name: 'read',
          params: { path: 'a.txt' },
          pieces: ['{"path":', '"a.', 'txt"}'],
          result: 'hi',
        },
      ],
    },
    { says: ['Do', 'ne.'] },
  ],
  made: { 'a.txt': 'hi', 'notes/b.txt': 'two' },
};

/** Two turns of one conversation: the second request of turn 2 carries all of turn 1. */
const TWO_TURNS: Conversation = {
  prompts: ['How many files?', 'Now say bye'],
  answers: [
    {
      calls: [{ id: 'call_ls', name: 'bash', params: { command: 'ls | wc -l' }, result: '2\n' }],
    },
    { says: ['Two files.'] },
    { says: ['Bye.'] },
  ],
  files: { 'x.txt': 'x', 'y.txt': 'y' },
};

/** A command that fails and a tool that does not exist, in one message. */
const FAILING: Conversation = {
  prompts: ['Try it'],
  answers: [
    {
      calls: [
        {
          id: 'call_fail',
          name: 'bash',
          params: { command: 'echo out; echo oops >&2; exit 3' },
          result: 'out\noops\n\n(exit 3)',
          isError: true,
        },
        { id: 'call_fly', name: 'fly', params: {}, result: 'unknown tool fly', isError: true },
        {
          id: 'call_read',
          name: 'read',
          params: { path: 'missing.txt' },
          result: "ENOENT: no such file or directory, open 'missing.txt'",
          isError: true,
        },
      ],
    },
    { says: ['It failed.'] },
  ],
};

const { chat, chatJson, responses, messages } = FORMATS;

describe('test/fixtures/tool-agent.mjs', () => {
  it('PB-01 --stream: each format streams tool calls (parallel ones too) that the agent assembles from the deltas, runs, and answers with every result tied to its id', async () => {
    const [chatRequests] = await Promise.all(
      [chat, responses, messages].map((f) => converse(f, ['--stream'], MAKE_NOTES)),
    );
    // What converse() checked in every format, spelled out once: chat's second request.
    expect(json(chatRequests?.[1]).messages).toEqual([
      { role: 'user', content: 'Make two notes and read the first' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_a',
            type: 'function',
            function: { name: 'bash', arguments: '{"command":"printf hi > a.txt && echo made"}' },
          },
          {
            id: 'call_b',
            type: 'function',
            function: { name: 'write', arguments: '{"path":"notes/b.txt","content":"two"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: 'made\n' },
      { role: 'tool', tool_call_id: 'call_b', content: 'wrote 3 bytes' },
    ]);
  });

  it("PB-01 --helper: the SDKs' own helpers (finalChatCompletion, finalResponse, finalMessage) parse the same answers, arguments included", async () => {
    await Promise.all(
      [chat, responses, messages].map((f) => converse(f, ['--helper'], MAKE_NOTES)),
    );
  });

  it('PB-01 without --stream: chat completions as one JSON body each; two turns keep one history in every format', async () => {
    await Promise.all([
      converse(chatJson, [], MAKE_NOTES),
      converse(chatJson, [], TWO_TURNS),
      converse(responses, ['--helper'], TWO_TURNS),
      converse(messages, ['--stream'], TWO_TURNS),
    ]);
  });

  it('PB-01 a failing command, an unknown tool and a missing file are failed results (anthropic is_error: true), and the turn goes on', async () => {
    await Promise.all([
      converse(messages, ['--stream'], FAILING),
      converse(messages, ['--helper'], FAILING),
    ]);
  });

  it('PB-01 an error ends the run with what was done so far and exit 1: an SDK error, a failed stream, --max-steps', async () => {
    const run = async (api: Format['api'], flags: string[], answers: MockServerResponse[]) => {
      const mock = await server();
      mock.enqueue(answers);
      const r = await runCommand(process.execPath, [AGENT, '--api', api, ...flags, 'Count'], {
        env: mock.env(),
        cwd: testDir('shimkit-agent-'),
      });
      expect(r.code, r.stderr.toString()).toBe(1);
      return { out: JSON.parse(r.stdout.toString()) as AgentOut, requests: mock.requests() };
    };
    const call: Call = {
      id: 'toolu_1',
      name: 'bash',
      params: { command: 'echo 1' },
      result: '1\n',
    };
    const asks = messages.answer({ calls: [call] });
    const [unanswered, bounded, failed, broken] = await Promise.all([
      run('messages', ['--stream'], [asks]), // the second request is unmatched: a 500 not retried
      run('messages', ['--stream', '--max-steps', '1'], [asks, asks]),
      // finalResponse() resolves with a `response.failed` response: the agent throws its error
      run('responses', ['--helper'], [sse.responses('Hel', { failed: { message: 'bad' } })]),
      run('chat', ['--stream'], [sse.chat('Hel', { error: { message: 'overloaded' } })]),
    ]);
    const ran = { name: 'bash', id: 'toolu_1', params: { command: 'echo 1' }, result: '1\n' };
    const turn = { prompt: 'Count', text: null, toolCalls: [{ ...ran, isError: false }] };
    expect(unanswered.out).toEqual({
      turns: [turn],
      error: { status: 500, message: expect.stringContaining('shimkit: no scripted response') },
    });
    expect(unanswered.requests).toHaveLength(2);
    expect(bounded.out).toEqual({
      turns: [turn],
      error: {
        status: null,
        message: 'the model still called tools after 1 requests (--max-steps)',
      },
    });
    expect(bounded.requests).toHaveLength(1);
    const nothing = { prompt: 'Count', text: null, toolCalls: [] };
    expect(failed.out).toEqual({ turns: [nothing], error: { status: null, message: 'bad' } });
    expect(broken.out).toEqual({
      turns: [nothing],
      error: { status: null, message: 'overloaded' },
    });
  });
});

describe('examples/agent/tool-agent.mjs', () => {
  /** Run the example in a cwd holding a.txt and b.txt, the model's answers given as chat.completion bodies. */
  async function example(answers: Answer[]) {
    const api = await server();
    api.enqueue(answers.map((a) => reply.json(completion(a))));
    const cwd = testDir('shimkit-example-');
    mkdirSync(join(cwd, 'src'));
    writeFileSync(join(cwd, 'a.txt'), 'a');
    writeFileSync(join(cwd, 'b.txt'), 'b');
    const r = await runCommand(process.execPath, [EXAMPLE, 'What files are here?'], {
      env: api.env(),
      cwd,
    });
    return { r, stdout: r.stdout.toString(), stderr: r.stderr.toString(), api };
  }
  const ls: Call = { id: 'call_ls', name: 'bash', params: { command: 'ls' }, result: '' };
  const system = {
    role: 'system',
    content: 'You are a coding agent. Use bash to look at and change the project.',
  };
  const user = { role: 'user', content: 'What files are here?' };
  const asked = {
    role: 'assistant',
    content: null,
    refusal: null,
    tool_calls: [
      {
        id: 'call_ls',
        type: 'function',
        function: { name: 'bash', arguments: '{"command":"ls"}' },
      },
    ],
  };

  it('PB-08 the example agent runs the `ls` the model calls for, for real, sends its output back, and prints the answer', async () => {
    const [good, broken] = await Promise.all([
      example([{ calls: [ls] }, { says: ['Two files and a src dir.'] }]),
      example([{ calls: [ls] }]), // the second request is unmatched: a 500 not retried
    ]);
    expect([good.r.code, good.stderr, good.stdout]).toEqual([
      0,
      '$ ls\n',
      'Two files and a src dir.\n',
    ]);
    const [first, second] = good.api.requests();
    expect(json(first)).toMatchObject({
      model: 'gpt-4o-mini',
      messages: [system, user],
      tools: [{ type: 'function', function: { name: 'bash' } }],
    });
    expect(json(first).stream).toBeUndefined();
    expect(json(second).messages).toEqual([
      system,
      user,
      asked,
      { role: 'tool', tool_call_id: 'call_ls', content: 'a.txt\nb.txt\nsrc\n' },
    ]);

    expect(broken.r.code).toBe(1);
    expect(broken.stdout).toBe('');
    expect(broken.stderr).toMatch(
      /^\$ ls\nagent: 500 shimkit: no scripted response for POST \/v1\/chat\/completions/,
    );
    expect(broken.api.requests()).toHaveLength(2);
  });
});

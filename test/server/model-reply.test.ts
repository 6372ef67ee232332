// A playbook's answers (PB-01) as the real SDKs read them: openai 6.x (chat
// completions, the Responses API) and @anthropic-ai/sdk, each in a child
// process configured by nothing but api.env(), ask with create (one JSON
// body), create with stream: true (read delta by delta) and the SDK's own
// streaming helper, and get back the tool names, ids, parsed arguments and
// text of every kind of answer. The three children run side by side, each
// asking all its cases in turn; the tests below read what they reported.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMockServer, type LoggedRequest, type MockServer } from '../../src/index.js';
import { type ModelFormat, readConversation } from '../../src/server/core/model/conversation.js';
import { codePointPieces, wordPieces } from '../../src/server/core/model/pieces.js';
import {
  type ModelAnswer,
  modelReply,
  modelWire,
  toolCallId,
} from '../../src/server/core/model/reply.js';
import { toWireResponse } from '../../src/server/response.js';

const CLIENT = join(import.meta.dirname, '../fixtures/model-client.mjs');

const FORMATS: ModelFormat[] = ['chat', 'responses', 'messages'];
const METHODS = ['create', 'create-stream', 'helper'] as const;
type Method = (typeof METHODS)[number];

const BASH = { command: 'ls -la "my dir" && echo 👋' };
const READ = { path: 'README.md' };
const WRITE = { path: 'out.txt', content: 'héllo\nwörld 🎉 "quoted" \\ tab\t' };
const call = (name: string, params: object) => ({ name, arguments: JSON.stringify(params) });

const ANSWERS: Array<{ kind: string; text?: string; calls: ModelAnswer['calls'] }> = [
  { kind: 'one tool call', calls: [call('bash', BASH)] },
  { kind: 'two parallel tool calls', calls: [call('read', READ), call('write', WRITE)] },
  { kind: 'text', text: 'Found 2 files: a.txt and b.txt. Done 👍', calls: [] },
  {
    kind: 'text and a tool call',
    text: 'Let me look.',
    calls: [call('bash', { command: 'cat a' })],
  },
];

interface Case {
  format: ModelFormat;
  method: Method;
  kind: string;
  answer: ModelAnswer;
  prompt: string;
}

const CASES: Case[] = FORMATS.flatMap((format) =>
  METHODS.flatMap((method) =>
    ANSWERS.map(({ kind, text, calls }, a) => {
      const key = `p${METHODS.indexOf(method) + 1}_s${a + 1}`;
      const answer: ModelAnswer = { key, calls, ...(text === undefined ? {} : { text }) };
      return { format, method, kind, answer, prompt: `case ${key}` };
    }),
  ),
);

interface Reported {
  text?: string | null;
  calls?: Array<{ id: string; name: string; arguments?: string; parsed: unknown }>;
  finish?: string | null;
  usage?: Record<string, unknown> | null;
  done?: Array<{ name: string; parsed: unknown }>;
  error?: { status: number | null; message: string };
}

const servers = new Map<ModelFormat, MockServer>();
const reports = new Map<string, Reported>();
const id = (c: Case) => `${c.format} ${c.answer.key}`;
const children = new Set<ChildProcess>();

/** Run the model client for `format`'s cases, with `api`'s env; its report per case. */
function runClient(api: MockServer, format: ModelFormat, cases: Case[]): Promise<Reported[]> {
  const child = spawn(process.execPath, [CLIENT], { env: api.env(), stdio: 'pipe' });
  children.add(child);
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
  child.stdin.end(JSON.stringify({ api: format, cases }));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0)
        reject(new Error(`model-client ${format} exited ${code}: ${Buffer.concat(err)}`));
      else resolve(JSON.parse(Buffer.concat(out).toString()) as Reported[]);
    });
  });
}

beforeAll(async () => {
  await Promise.all(
    FORMATS.map(async (format) => {
      const api = await createMockServer({ strict: true });
      servers.set(format, api);
      const cases = CASES.filter((c) => c.format === format);
      for (const c of cases) {
        // What the client's request says: stream_options.include_usage only in chat create-stream.
        const includeUsage = format === 'chat' && c.method === 'create-stream';
        const stream = c.method !== 'create';
        api.enqueue(modelReply(format, stream, c.answer, { model: 'gpt-test', includeUsage }));
      }
      const reported = await runClient(api, format, cases);
      for (const [i, c] of cases.entries()) reports.set(id(c), reported[i] ?? {});
    }),
  );
});

afterAll(async () => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  await Promise.all([...servers.values()].map((api) => api.dispose().catch(() => {})));
});

describe.each(FORMATS)('%s', (format) => {
  for (const c of CASES.filter((x) => x.format === format)) {
    it(`PB-01 ${format} ${c.method}: the SDK reads ${c.kind} (ids, names, parsed arguments, text)`, () => {
      const got = reports.get(id(c));
      expect(got?.error).toBeUndefined();
      const { answer } = c;
      const calls = answer.calls.map((x, i) => ({
        id: toolCallId(format, answer.key, i + 1),
        name: x.name,
        parsed: JSON.parse(x.arguments) as unknown,
      }));
      expect(got?.calls).toMatchObject(calls);
      expect(got?.calls).toHaveLength(calls.length);
      for (const [i, x] of (got?.calls ?? []).entries()) {
        if (x.arguments !== undefined) expect(x.arguments).toBe(answer.calls[i]?.arguments);
      }
      expect(got?.text).toBe(answer.text ?? null);
      const finish = {
        chat: answer.calls.length > 0 ? 'tool_calls' : 'stop',
        responses: 'completed',
        messages: answer.calls.length > 0 ? 'tool_use' : 'end_turn',
      }[format];
      expect(got?.finish).toBe(finish);
      if (c.method === 'helper' && format !== 'responses') {
        // The helper's own events: one per call, with the arguments it parsed.
        expect(got?.done).toEqual(calls.map(({ name, parsed }) => ({ name, parsed })));
      }
    });
  }

  it(`PB-01 ${format}: every request was answered in full, in the form it asked for`, () => {
    const api = servers.get(format) as MockServer;
    const cases = CASES.filter((c) => c.format === format);
    const requests = api.requests();
    expect(requests.map((r) => r.response)).toMatchObject(
      cases.map(() => ({ status: 200, endedBy: 'complete' })),
    );
    expect(requests.map((r: LoggedRequest) => readConversation(format, r.json))).toMatchObject(
      cases.map((c) => ({
        format,
        stream: c.method !== 'create',
        prompt: c.prompt,
        results: [],
        includeUsage: format === 'chat' && c.method === 'create-stream',
      })),
    );
    api.assertDone();
  });
});

describe('stream deltas', () => {
  it('PB-01 chat create-stream: the usage chunk counts the deltas when the request asks for it', () => {
    const c = CASES.find((x) => x.format === 'chat' && x.method === 'create-stream');
    const usage = reports.get(id(c as Case))?.usage;
    expect(usage).toEqual({ prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 });
  });

  it('PB-01 arguments are streamed in up to 3 pieces cut between code points, text in up to 4 deltas cut at words', () => {
    const args = JSON.stringify(BASH);
    const reply = modelReply('chat', true, { key: 'k', calls: [call('bash', BASH)] }, {});
    const pieces = (reply.sse ?? []).flatMap((e) => {
      const data = e.data as { choices?: Array<{ delta: { tool_calls?: unknown[] } }> };
      const tc = data.choices?.[0]?.delta.tool_calls?.[0] as
        | { function: { arguments: string } }
        | undefined;
      return tc?.function.arguments ? [tc.function.arguments] : [];
    });
    expect(pieces).toEqual(codePointPieces(args, 3));
    expect(pieces).toHaveLength(3);
    expect(pieces.join('')).toBe(args);
    expect(codePointPieces('👋👋', 3)).toEqual(['👋', '👋']);
    expect(codePointPieces('a👋b👋c👋', 3)).toEqual(['a👋', 'b👋', 'c👋']);
    expect(codePointPieces('', 3)).toEqual(['']);
    expect(wordPieces('Found 2 files: a.txt and b.txt.', 4)).toEqual([
      'Found',
      ' 2 files:',
      ' a.txt',
      ' and b.txt.',
    ]);
    expect(wordPieces('  two words  ', 4)).toEqual(['  two', ' words  ']);
    expect(wordPieces('one', 4)).toEqual(['one']);
    expect(wordPieces('', 4)).toEqual(['']);
  });

  it('PB-01 the same answer is the same bytes; ids follow the key; model follows the request', () => {
    const answer: ModelAnswer = { key: 'p2_s5', text: 'Hi there.', calls: [call('bash', BASH)] };
    for (const format of FORMATS) {
      for (const stream of [true, false]) {
        const a = modelReply(format, stream, answer, { model: 'm-1' });
        expect(JSON.stringify(modelReply(format, stream, answer, { model: 'm-1' }))).toBe(
          JSON.stringify(a),
        );
        const text = JSON.stringify(a);
        expect(text).toContain(toolCallId(format, 'p2_s5', 1));
        expect(text).toContain('"model":"m-1"');
        expect(JSON.stringify(modelReply(format, stream, answer, {}))).toContain(
          '"model":"shimkit-model"',
        );
      }
    }
    expect(toolCallId('chat', 'p1_s3', 2)).toBe('call_shimkit_p1_s3_2');
    expect(toolCallId('responses', 'p1_s3', 1)).toBe('call_shimkit_p1_s3_1');
    expect(toolCallId('messages', 'p1_s3', 1)).toBe('toolu_shimkit_p1_s3_1');
    const json = (f: ModelFormat) => JSON.stringify(modelReply(f, false, answer, {}).json);
    expect(json('chat')).toContain('"id":"chatcmpl-shimkit-p2_s5"');
    expect(json('responses')).toContain('"id":"resp_shimkit_p2_s5"');
    expect(json('responses')).toContain('"id":"msg_shimkit_p2_s5"');
    expect(json('responses')).toContain('"id":"fc_shimkit_p2_s5_1"');
    expect(json('messages')).toContain('"id":"msg_shimkit_p2_s5"');
  });

  it('PB-01 modelWire() writes exactly the bytes toWireResponse(modelReply()) would, for every format, form and answer', () => {
    const answers: ModelAnswer[] = [
      { key: 'p1_s1', calls: [call('bash', BASH)] },
      { key: 'p1_s2', calls: [call('read', { path: 'a' }), call('read', { path: 'b' })] },
      { key: 'p1_s3', text: 'Done: café, 😀, a lone \ud800 and a line\nbreak.', calls: [] },
      { key: 'p1_s4', text: '', calls: [] },
      { key: 'p1_s5', text: 'Both.', calls: [call('write', { content: 'x\r\ny' })] },
    ];
    for (const format of FORMATS) {
      for (const stream of [true, false]) {
        for (const includeUsage of [true, false]) {
          for (const answer of answers) {
            const request = { model: 'm', includeUsage };
            const label = `${format} ${stream} ${includeUsage} ${answer.key}`;
            expect(modelWire(format, stream, answer, request), label).toEqual(
              toWireResponse(modelReply(format, stream, answer, request), label),
            );
          }
        }
      }
    }
  });
});

// Agent playbooks from the command line (SPEC PB-07): `shimkit serve
// --playbook FILE`, `shimkit playbook D FILE` (or `-`), then the agent's
// side played by hand with fetch (chat completions, Responses, Anthropic
// Messages), read back with `shimkit tool-calls` / `tool-results` and
// checked with `shimkit verify`. Commands that do not depend on each other
// run side by side: each is a Node start.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { shimkit, shimkitOk } from './helpers.js';
import { parseExports, serveDetached, serveOk, serverTestDir } from './server-helpers.js';

/** The chat playbook: a tool call, two in parallel, then text. Only chat completions (with /v1). */
const LISTER = {
  name: 'lister',
  match: { path: '/v1/chat/completions' },
  turns: [
    {
      when: 'List the files',
      do: [
        { calls: 'bash', params: { command: 'ls' } },
        {
          parallel: [
            { calls: 'read', params: { path: 'a.txt' } },
            { calls: 'read', params: { path: 'b.txt' } },
          ],
        },
        { says: 'Found 2 files.' },
      ],
    },
  ],
};

/** The Anthropic playbook: requests with `x-agent: fixer`, a prompt matched by a pattern. */
const FIXER = {
  name: 'fixer',
  match: { headers: { 'x-agent': 'fixer' } },
  turns: [
    {
      when: { regex: '^fix', flags: 'i' },
      do: [{ calls: 'bash', params: { command: 'make' } }, { says: 'Fixed.' }],
    },
  ],
};

/** Added with `shimkit playbook D FILE`, unnamed: playbook#3. */
const GREETER = {
  match: { path: '/v1/responses' },
  turns: [{ when: 'Say hi', do: [{ says: 'Hello!' }] }],
};

/** Added from stdin: chat completions without /v1, any prompt. */
const NOTER = {
  name: 'noter',
  match: { path: '/chat/completions' },
  turns: [
    {
      when: { any: true },
      do: [{ calls: 'bash', params: { command: 'date' } }, { says: 'Noted.' }],
    },
  ],
};

/** POST `body` as JSON, as an agent's HTTP client does; the answer's status, headers and text. */
async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; text: string }> {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: r.status, headers: r.headers, text: await r.text() };
}

/** A chat-completions stream chunk, as far as an agent reads it. */
interface ChatChunk {
  choices: Array<{
    finish_reason: string | null;
    delta: {
      tool_calls?: Array<{
        index: number;
        id?: string;
        function?: { name?: string; arguments?: string };
      }>;
    };
  }>;
}

/** An Anthropic Messages stream event, as far as an agent reads it. */
interface MessagesEvent {
  type: string;
  content_block?: { type: string; id: string; name: string; input: unknown };
  delta?: { type?: string; partial_json?: string; stop_reason?: string };
}

/** The `data:` JSON of an SSE body (chat's `[DONE]` left out). */
function events<T>(body: string): T[] {
  return body
    .split('\n')
    .filter((line) => line.startsWith('data: {'))
    .map((line) => JSON.parse(line.slice(6)) as T);
}

/** The tool calls of a streamed chat answer, put together from their deltas as an agent does. */
function streamedToolCalls(body: string) {
  const calls: Array<{ id: string; type: string; function: { name: string; arguments: string } }> =
    [];
  let finish: string | null = null;
  for (const chunk of events<ChatChunk>(body)) {
    const choice = chunk.choices[0];
    finish = choice?.finish_reason ?? finish;
    for (const delta of choice?.delta.tool_calls ?? []) {
      calls[delta.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } };
      const call = calls[delta.index] as (typeof calls)[number];
      if (delta.id) call.id = delta.id;
      if (delta.function?.name) call.function.name = delta.function.name;
      call.function.arguments += delta.function?.arguments ?? '';
    }
  }
  return { calls, finish };
}

/** Write the playbook files in `dir` (noter comes on stdin). */
function playbookFiles(dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'lister.json'), JSON.stringify(LISTER));
  writeFileSync(join(dir, 'fixer.json'), JSON.stringify(FIXER, null, 2));
  writeFileSync(join(dir, 'greeter.json'), JSON.stringify(GREETER));
}

describe('playbooks from the command line (PB-07)', () => {
  it('PB-07 serve --playbook (twice) and playbook D FILE / -: chat, Anthropic and Responses conversations on the deterministic ids; tool-calls and tool-results as lines and --json, filtered; verify fails until each playbook was played through', async () => {
    const root = serverTestDir();
    const files = join(root, 'files');
    playbookFiles(files);
    const d = join(root, 'api');
    // Relative paths, from the caller's cwd: the detached server runs in D.
    const ready = await serveOk(
      [
        'serve',
        '--dir',
        d,
        '--playbook',
        'lister.json',
        '--playbook',
        'fixer.json',
        '--strict',
        '--detach',
      ],
      { cwd: files },
    );
    const env = parseExports(ready);
    // The two adds one after the other: a playbook's number (and ids) is its place in the order made.
    const [added, before, empty] = await Promise.all([
      shimkitOk(['playbook', d, 'greeter.json'], { cwd: files }),
      shimkit(['verify', d]),
      shimkitOk(['tool-calls', d, '--json']),
    ]);
    expect(added).toBe('playbook#3: 1 action\n');
    const fromStdin = await shimkitOk(['playbook', d, '-'], { input: JSON.stringify(NOTER) });
    expect(fromStdin).toBe('noter: 2 actions\n');
    expect(empty).toBe('[]\n');
    expect(before.code).toBe(1);
    expect(before.stdout.toString()).toBe('');
    const report = before.stderr.toString();
    expect(
      report,
    ).toContain(`Playbook not fully consumed: consumed 0 of 3 actions (playbook 'lister'); remaining:
    - calls("bash", {"command":"ls"}) (step 1, turn 1)
    - parallel(calls("read", {"path":"a.txt"}), calls("read", {"path":"b.txt"})) (step 2, turn 1)
    - says("Found 2 files.") (step 3, turn 1)`);
    expect(report).toContain(
      "Playbook not fully consumed: consumed 0 of 2 actions (playbook 'fixer')",
    );
    // (playbook#3 may have come after the verify.)
    expect(report).toContain(
      'check its match and that the agent uses this server (the variables `shimkit serve` printed).',
    );

    // The chat agent: a tool call, two in parallel (streamed), then text; results by the calls' ids.
    const chat = `${env.OPENAI_BASE_URL}/chat/completions`;
    const tools = ['bash', 'read'].map((name) => ({
      type: 'function',
      function: { name, parameters: { type: 'object' } },
    }));
    const messages: unknown[] = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'List the files' },
    ];
    const first = await post(chat, { model: 'm', tools, messages });
    expect(first.status, first.text).toBe(200);
    const one = JSON.parse(first.text).choices[0];
    expect(one.finish_reason).toBe('tool_calls');
    expect(one.message.tool_calls).toEqual([
      {
        id: 'call_shimkit_p1_s1_1',
        type: 'function',
        function: { name: 'bash', arguments: '{"command":"ls"}' },
      },
    ]);
    messages.push(one.message, {
      role: 'tool',
      tool_call_id: one.message.tool_calls[0].id,
      content: 'a.txt\nb.txt\n',
    });
    const second = await post(chat, { model: 'm', tools, messages, stream: true });
    expect(second.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const two = streamedToolCalls(second.text);
    expect(two.finish).toBe('tool_calls');
    expect(two.calls.map((c) => [c.id, c.function.name, c.function.arguments])).toEqual([
      ['call_shimkit_p1_s2_1', 'read', '{"path":"a.txt"}'],
      ['call_shimkit_p1_s2_2', 'read', '{"path":"b.txt"}'],
    ]);
    messages.push(
      { role: 'assistant', content: null, tool_calls: two.calls },
      {
        role: 'tool',
        tool_call_id: two.calls[0]?.id,
        content: [
          { type: 'text', text: 'al' },
          { type: 'text', text: 'pha' },
        ],
      },
      { role: 'tool', tool_call_id: two.calls[1]?.id, content: 'beta' },
    );
    const third = JSON.parse((await post(chat, { model: 'm', tools, messages })).text).choices[0];
    expect([third.finish_reason, third.message.content]).toEqual(['stop', 'Found 2 files.']);

    // The Anthropic agent: a streamed tool_use, then a tool_result flagged is_error.
    const anthropic = `${env.ANTHROPIC_BASE_URL}/v1/messages`;
    const headers = {
      'x-agent': 'fixer',
      'x-api-key': env.ANTHROPIC_API_KEY as string,
      'anthropic-version': '2023-06-01',
    };
    const turn = [{ role: 'user', content: 'Fix the build' }];
    const streamed = await post(
      anthropic,
      { model: 'c', max_tokens: 100, stream: true, messages: turn },
      headers,
    );
    const sse = events<MessagesEvent>(streamed.text);
    const block = sse.find((e) => e.type === 'content_block_start')?.content_block;
    expect(block).toEqual({
      type: 'tool_use',
      id: 'toolu_shimkit_p2_s1_1',
      name: 'bash',
      input: {},
    });
    const input = sse
      .filter((e) => e.delta?.type === 'input_json_delta')
      .map((e) => e.delta?.partial_json)
      .join('');
    expect(JSON.parse(input)).toEqual({ command: 'make' });
    expect(sse.find((e) => e.type === 'message_delta')?.delta?.stop_reason).toBe('tool_use');
    const fixed = await post(
      anthropic,
      {
        model: 'c',
        max_tokens: 100,
        messages: [
          ...turn,
          { role: 'assistant', content: [{ ...block, input: { command: 'make' } }] },
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: block?.id,
                content: 'make: *** No rule to make target.\n',
                is_error: true,
              },
            ],
          },
        ],
      },
      headers,
    );
    expect(JSON.parse(fixed.text)).toMatchObject({
      content: [{ type: 'text', text: 'Fixed.' }],
      stop_reason: 'end_turn',
    });

    // playbook#3 on the Responses API; noter on /chat/completions (no /v1), any prompt.
    const hello = JSON.parse(
      (await post(`${env.OPENAI_BASE_URL}/responses`, { input: 'Say hi' })).text,
    );
    expect(hello.output[0].content[0].text).toBe('Hello!');
    const note = [{ role: 'user', content: 'whatever comes' }];
    const dated = JSON.parse(
      (await post(`${env.SHIMKIT_SERVER_URL}/chat/completions`, { messages: note })).text,
    );
    const call = dated.choices[0].message.tool_calls[0];
    expect(call.id).toBe('call_shimkit_p4_s1_1');
    const long = 'x'.repeat(300);
    const noted = await post(`${env.SHIMKIT_SERVER_URL}/chat/completions`, {
      messages: [
        ...note,
        dated.choices[0].message,
        { role: 'tool', tool_call_id: call.id, content: long },
      ],
    });
    expect(JSON.parse(noted.text).choices[0].message.content).toBe('Noted.');

    const [
      callLines,
      callJson,
      resultLines,
      resultJson,
      fixerCalls,
      reads,
      bashCalls,
      unknown,
      after,
      log,
    ] = await Promise.all([
      shimkitOk(['tool-calls', d]),
      shimkitOk(['tool-calls', d, '--json']),
      shimkitOk(['tool-results', d]),
      shimkitOk(['tool-results', d, '--json']),
      shimkitOk(['tool-calls', d, '--playbook', 'fixer', '--json']),
      shimkitOk(['tool-results', d, '--tool', 'read']),
      shimkitOk(['tool-calls', d, '--tool', 'bash', '--playbook', 'noter']),
      shimkit(['tool-results', d, '--playbook', 'fixr']),
      shimkitOk(['verify', d]),
      shimkitOk(['requests', d]),
    ]);
    expect(callLines).toBe(
      [
        'lister step 1 turn 1 #1 bash call_shimkit_p1_s1_1 {"command":"ls"}',
        'lister step 2 turn 1 #2 read call_shimkit_p1_s2_1 {"path":"a.txt"}',
        'lister step 2 turn 1 #2 read call_shimkit_p1_s2_2 {"path":"b.txt"}',
        'fixer step 1 turn 1 #4 bash toolu_shimkit_p2_s1_1 {"command":"make"}',
        'noter step 1 turn 1 #7 bash call_shimkit_p4_s1_1 {"command":"date"}',
        '',
      ].join('\n'),
    );
    expect(JSON.parse(callJson)).toEqual([
      {
        playbook: 'lister',
        step: 1,
        turn: 1,
        toolName: 'bash',
        toolCallId: 'call_shimkit_p1_s1_1',
        params: { command: 'ls' },
        seq: 1,
      },
      {
        playbook: 'lister',
        step: 2,
        turn: 1,
        toolName: 'read',
        toolCallId: 'call_shimkit_p1_s2_1',
        params: { path: 'a.txt' },
        seq: 2,
      },
      {
        playbook: 'lister',
        step: 2,
        turn: 1,
        toolName: 'read',
        toolCallId: 'call_shimkit_p1_s2_2',
        params: { path: 'b.txt' },
        seq: 2,
      },
      {
        playbook: 'fixer',
        step: 1,
        turn: 1,
        toolName: 'bash',
        toolCallId: 'toolu_shimkit_p2_s1_1',
        params: { command: 'make' },
        seq: 4,
      },
      {
        playbook: 'noter',
        step: 1,
        turn: 1,
        toolName: 'bash',
        toolCallId: 'call_shimkit_p4_s1_1',
        params: { command: 'date' },
        seq: 7,
      },
    ]);
    expect(resultLines).toBe(
      [
        'lister step 1 turn 1 #2 bash call_shimkit_p1_s1_1 → "a.txt\\nb.txt\\n"',
        'lister step 2 turn 1 #3 read call_shimkit_p1_s2_1 → "alpha"',
        'lister step 2 turn 1 #3 read call_shimkit_p1_s2_2 → "beta"',
        'fixer step 1 turn 1 #5 bash toolu_shimkit_p2_s1_1 → "make: *** No rule to make target.\\n" error',
        `noter step 1 turn 1 #8 bash call_shimkit_p4_s1_1 → "${'x'.repeat(198)}…`, // cut at 200
        '',
      ].join('\n'),
    );
    expect(JSON.parse(resultJson)).toEqual([
      {
        playbook: 'lister',
        step: 1,
        turn: 1,
        toolName: 'bash',
        toolCallId: 'call_shimkit_p1_s1_1',
        text: 'a.txt\nb.txt\n',
        content: 'a.txt\nb.txt\n',
        isError: false,
        seq: 2,
      },
      {
        playbook: 'lister',
        step: 2,
        turn: 1,
        toolName: 'read',
        toolCallId: 'call_shimkit_p1_s2_1',
        text: 'alpha', // the text parts joined; content as sent
        content: [
          { type: 'text', text: 'al' },
          { type: 'text', text: 'pha' },
        ],
        isError: false,
        seq: 3,
      },
      {
        playbook: 'lister',
        step: 2,
        turn: 1,
        toolName: 'read',
        toolCallId: 'call_shimkit_p1_s2_2',
        text: 'beta',
        content: 'beta',
        isError: false,
        seq: 3,
      },
      {
        playbook: 'fixer',
        step: 1,
        turn: 1,
        toolName: 'bash',
        toolCallId: 'toolu_shimkit_p2_s1_1',
        text: 'make: *** No rule to make target.\n',
        content: 'make: *** No rule to make target.\n',
        isError: true,
        seq: 5,
      },
      {
        playbook: 'noter',
        step: 1,
        turn: 1,
        toolName: 'bash',
        toolCallId: 'call_shimkit_p4_s1_1',
        text: long, // whole in --json
        content: long,
        isError: false,
        seq: 8,
      },
    ]);
    expect(JSON.parse(fixerCalls).map((c: { toolCallId: string }) => c.toolCallId)).toEqual([
      'toolu_shimkit_p2_s1_1',
    ]);
    expect(reads).toBe(
      'lister step 2 turn 1 #3 read call_shimkit_p1_s2_1 → "alpha"\nlister step 2 turn 1 #3 read call_shimkit_p1_s2_2 → "beta"\n',
    );
    expect(bashCalls).toBe('noter step 1 turn 1 #7 bash call_shimkit_p4_s1_1 {"command":"date"}\n');
    expect(unknown.code).toBe(2);
    expect(unknown.stdout.toString()).toBe('');
    expect(unknown.stderr.toString()).toContain(
      `no playbook named "fixr" on the server in ${d}; it has lister, fixer, playbook#3, noter.`,
    );
    expect(after).toMatch(
      /^ok: mock server http:\/\/127\.0\.0\.1:\d+, 8 requests, every response used\n$/,
    );
    expect(log.split('\n').map((line) => /\(([^)]*)\)$/.exec(line)?.[1])).toEqual([
      ...['lister', 'lister', 'lister', 'fixer', 'fixer', 'playbook#3', 'noter', 'noter'],
      undefined,
    ]);
  });

  it("PB-07 a refused request and an exhausted playbook: the 500 says which step expected what, and verify reports both in the CLI's words (and its --help says so)", async () => {
    const d = join(serverTestDir(), 'api');
    const served = await serveDetached(d);
    await shimkitOk(['playbook', d, '-'], { input: JSON.stringify(GREETER) });
    const url = `${served.url}/v1/responses`;
    const wrong = await post(url, { input: 'Say hello' });
    expect(wrong.status).toBe(500);
    expect(wrong.headers.get('x-should-retry')).toBe('false');
    const why =
      'step 1 (turn 1: says("Hello!")) expected the prompt "Say hi" (compared after trimming) as its last user text, and it came as "Say hello"';
    expect(JSON.parse(wrong.text).error.message).toContain(why);
    expect((await post(url, { input: 'Say hi' })).status).toBe(200); // the same step answers
    const more = await post(url, { input: 'And again' });
    expect(more.status).toBe(500);
    expect(JSON.parse(more.text).error.message).toContain(
      'Playbook exhausted: consumed 1 of 1 action',
    );
    const [verify, log, help] = await Promise.all([
      shimkit(['verify', d]),
      shimkitOk(['requests', d]),
      shimkitOk(['verify', d, '--help']),
    ]);
    expect(help).toContain(
      'a playbook (`shimkit playbook`, `serve --playbook`) was not\nplayed through',
    );
    expect(verify.code).toBe(1);
    const report = verify.stderr.toString();
    expect(report).toContain(why);
    expect(report).toContain(
      `Playbook exhausted: consumed 1 of 1 action (playbook 'playbook#1'); last consumed: says("Hello!") at step 1 (turn 1). Then POST /v1/responses (request #3) asked for more`,
    );
    expect(report).toContain(`what its tools returned is in shimkit tool-results ${d}.`);
    expect(report).not.toContain('toolResults()');
    expect(log).toMatch(
      /^#1 POST \/v1\/responses → 500 \d+ bytes complete \(playbook#1\)\n#2 POST \/v1\/responses → 200 \d+ bytes complete \(playbook#1\)\n#3 POST \/v1\/responses → 500 \d+ bytes complete \(unmatched\)\n$/,
    );
  });

  it('PB-07 bad playbooks and dirs: a missing file, not JSON, a bad key (exit 2, with the file and the path to the key), --playbook - on serve; no server in D (exit 3); an unknown playbook name', async () => {
    const root = serverTestDir();
    const files = join(root, 'files');
    mkdirSync(files);
    const bad = join(files, 'bad.json');
    writeFileSync(
      bad,
      JSON.stringify({ turns: [{ when: 'x', do: [{ calls: 'bash', parms: {} }] }] }),
    );
    const notJson = join(files, 'not.json');
    writeFileSync(notJson, '{"turns": [');
    const good = join(files, 'good.json');
    writeFileSync(good, JSON.stringify(GREETER));
    const missing = join(files, 'missing.json');
    const idle = join(root, 'idle');
    mkdirSync(idle, { mode: 0o700 });
    const d = join(root, 'api');
    await serveDetached(d);
    const err = async (args: string[], code: number, input?: string) => {
      const r = await shimkit(args, input === undefined ? {} : { input });
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(code);
      expect(r.stdout.toString(), args.join(' ')).toBe('');
      return r.stderr.toString();
    };
    const badKey =
      'unknown key "parms" in turns[0].do[0]. Did you mean "params"? Valid keys: calls, params, says, parallel.';
    const texts = await Promise.all([
      err(['serve', '--dir', join(root, 's1'), '--playbook', missing], 2),
      err(['serve', '--dir', join(root, 's2'), '--playbook', notJson, '--detach'], 2),
      err(['serve', '--dir', join(root, 's3'), '--playbook', bad, '--detach'], 2),
      err(['serve', '--dir', join(root, 's4'), '--playbook', '-'], 2),
      err(['playbook', idle, good], 3),
      err(['playbook', join(root, 'nowhere'), good], 3),
      err(['playbook', d, missing], 2),
      err(['playbook', d, notJson], 2),
      err(['playbook', d, bad], 2),
      err(['playbook', d, '-'], 2, '{"turns":[{"when":"x","do":[{"says":"a","calls":"b"}]}]}'),
      err(['playbook', d], 2),
      err(['tool-calls', d, '--playbook', 'x'], 2),
      err(['tool-results', d, '--tol', 'bash'], 2),
      err(['tool-calls', idle], 3),
    ]);
    expect(texts[0]).toContain(`shimkit serve: cannot read the playbook ${missing}: ENOENT`);
    expect(texts[1]).toContain(`shimkit serve: the playbook ${notJson} is not JSON (`);
    expect(texts[1]).toContain('Its form: {"turns":[{"when":"…","do":[{"calls":"bash"');
    expect(texts[2]).toContain('exited with 2 before listening');
    expect(texts[2]).toContain(`--playbook ${bad}: playbook() #1: ${badKey}`);
    expect(texts[3]).toContain('--playbook takes a file');
    expect(texts[3]).toContain('shimkit playbook D - < playbook.json');
    expect(texts[4]).toContain(`shimkit playbook: no mock server runs in ${idle}`);
    expect(texts[5]).toContain('does not exist');
    expect(texts[6]).toContain(`shimkit playbook: cannot read the playbook ${missing}: ENOENT`);
    expect(texts[7]).toContain(`shimkit playbook: the playbook ${notJson} is not JSON (`);
    expect(texts[8]).toContain(`shimkit playbook: ${bad}: playbook() #1: ${badKey}`);
    expect(texts[9]).toContain(
      'shimkit playbook: the playbook on stdin: playbook() #1: turns[0].do[0] must have exactly one of "calls" (with "params"), "says" or "parallel", got calls and says.',
    );
    expect(texts[10]).toContain('Usage: shimkit playbook D FILE');
    expect(texts[11]).toContain(`no playbook named "x" on the server in ${d}; it has none.`);
    expect(texts[12]).toContain('unknown flag "--tol". Did you mean --tool?');
    expect(texts[13]).toContain(`no mock server runs in ${idle}`);
    // A refused playbook took nothing, not even a number: the next one is playbook#1.
    expect(await shimkitOk(['playbook', d, good])).toBe('playbook#1: 1 action\n');
    expect(await shimkitOk(['tool-results', d])).toBe('');
  });

  it('PB-07 --help: the overview lists playbook, tool-calls and tool-results; playbook --help shows the JSON form; serve --help the --playbook flag', async () => {
    const [top, playbook, calls, results, serve] = await Promise.all([
      shimkitOk(['--help']),
      shimkitOk(['playbook', '--help']),
      shimkitOk(['tool-calls', '--help']),
      shimkitOk(['tool-results', '--help']),
      shimkitOk(['serve', '--help']),
    ]);
    expect(top).toMatch(/^ {2}playbook +add a playbook \(the model of an agent under test\)/m);
    expect(top).toMatch(/^ {2}tool-calls +print the tool calls/m);
    expect(top).toMatch(/^ {2}tool-results +print the tool results/m);
    expect(playbook).toMatch(/^Usage: shimkit playbook D FILE\n/);
    expect(playbook).toContain('A playbook file is JSON:');
    expect(playbook).toContain('{"calls": "bash", "params": {"command": "ls"}}');
    expect(playbook).toContain('{"parallel": [');
    expect(playbook).toContain('{"says": "Found 2 files."}');
    expect(playbook).toContain('{"regex":"…","flags":"i"}, {"any":true}');
    expect(playbook).toMatch(/Examples:\n {2}shimkit playbook "\$D" agent\.json/);
    expect(calls).toMatch(
      /^Usage: shimkit tool-calls D \[--playbook NAME\] \[--tool NAME\] \[--json\]/,
    );
    expect(calls).toContain(
      'playbook#1 step 1 turn 1 #1 bash call_shimkit_p1_s1_1 {"command":"ls"}',
    );
    expect(results).toContain('"text" (the text parts joined),"content" (as');
    expect(serve).toContain('--playbook FILE      play the model with this playbook');
    for (const help of [playbook, calls, results]) expect(help).toContain('Exit codes:\n  0   ok');
  });
});

// What a playbook reads in a model request (PB-01, PB-02, PB-03): the format
// from the method and path, and from the parsed body the stream flag, the
// model, the last user message's text, every tool result (id, content as
// sent, text, is_error) and the last message in words; a body that is not
// such a request is a problem in words, never an exception.
import { describe, expect, it } from 'vitest';
import {
  type Conversation,
  modelFormatOf,
  readConversation,
} from '../../src/server/core/model/conversation.js';

/** The conversation, failing the test when the body is a problem. */
function read(...args: Parameters<typeof readConversation>): Conversation {
  const got = readConversation(...args);
  if ('problem' in got) throw new Error(`unexpected problem: ${got.problem}`);
  return got;
}

function problem(...args: Parameters<typeof readConversation>): string {
  const got = readConversation(...args);
  if (!('problem' in got)) throw new Error(`expected a problem, got ${JSON.stringify(got)}`);
  return got.problem;
}

describe('modelFormatOf', () => {
  it('PB-01 POST to the three endpoints, with or without /v1, in any method case', () => {
    expect(modelFormatOf('POST', '/v1/chat/completions')).toBe('chat');
    expect(modelFormatOf('post', '/chat/completions')).toBe('chat');
    expect(modelFormatOf('POST', '/v1/responses')).toBe('responses');
    expect(modelFormatOf('Post', '/responses')).toBe('responses');
    expect(modelFormatOf('POST', '/v1/messages')).toBe('messages');
    expect(modelFormatOf('POST', '/messages')).toBe('messages');
  });

  it('PB-01 other methods and paths are not model requests (exact paths only)', () => {
    expect(modelFormatOf('GET', '/v1/chat/completions')).toBeUndefined();
    expect(modelFormatOf('PUT', '/v1/messages')).toBeUndefined();
    for (const path of [
      '/v1/chat/completions/',
      '/V1/responses',
      '/v2/messages',
      '/v1/messages/count_tokens',
      '/v1/models',
      '/api/v1/chat/completions',
      '',
      'toString',
      '__proto__',
      'constructor',
    ]) {
      expect(modelFormatOf('POST', path), path).toBeUndefined();
    }
  });
});

describe('chat completions', () => {
  it('PB-01 PB-02 stream, model, include_usage and the last user message as a string or text parts', () => {
    const body = {
      model: 'gpt-test',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'developer', content: 'No.' },
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'ok' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'List ' },
            { type: 'image_url', image_url: { url: 'data:,' } },
            { type: 'text', text: 'files' },
          ],
        },
        { role: 'assistant', content: 'Sure.' },
      ],
    };
    expect(read('chat', body)).toEqual({
      format: 'chat',
      stream: true,
      model: 'gpt-test',
      includeUsage: true,
      prompt: 'List files',
      results: [],
      last: 'assistant: "Sure."',
    });
    const plain = read('chat', { messages: [{ role: 'user', content: 'List files' }] });
    expect(plain).toMatchObject({
      stream: false,
      model: undefined,
      includeUsage: false,
      prompt: 'List files',
      last: 'user: "List files"',
    });
    expect(read('chat', { stream: 'true', messages: [] })).toMatchObject({
      stream: false,
      prompt: undefined,
      last: 'no messages',
    });
    expect(read('chat', { messages: [{ role: 'system', content: 'sys' }] }).prompt).toBeUndefined();
  });

  it('PB-02 PB-03 tool results: role tool with a string tool_call_id, content as sent, text parts joined', () => {
    const parts = [
      { type: 'text', text: 'a.txt\n' },
      { type: 'image_url', image_url: { url: 'x' } },
      { type: 'text', text: 'b.txt' },
    ];
    const body = {
      messages: [
        { role: 'user', content: 'List files' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'read', arguments: '{}' } },
            { id: 'call_2', type: 'function', function: { name: 'write', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'file1.txt' },
        { role: 'tool', tool_call_id: 'call_2', content: parts },
        { role: 'tool', content: 'no id' },
        { role: 'tool', tool_call_id: 7, content: 'numeric id' },
      ],
    };
    const got = read('chat', body);
    expect(got.prompt).toBe('List files');
    expect(got.results).toEqual([
      { toolCallId: 'call_1', content: 'file1.txt', text: 'file1.txt', isError: false },
      { toolCallId: 'call_2', content: parts, text: 'a.txt\nb.txt', isError: false },
    ]);
    expect(got.results[1]?.content).toBe(parts);
    expect(got.last).toBe('tool result for (id 7 (number)): "numeric id"');
    expect(read('chat', { messages: body.messages.slice(0, 2) }).last).toBe(
      'assistant: tool calls read, write',
    );
    expect(read('chat', { messages: body.messages.slice(0, 3) }).last).toBe(
      'tool result for call_1: "file1.txt"',
    );
  });

  it('PB-05 the last message in words is cut at about 100 characters, never inside a surrogate pair', () => {
    const long = `${'x'.repeat(98)}👋 and more`;
    const { last } = read('chat', {
      messages: [{ role: 'tool', tool_call_id: 'c', content: long }],
    });
    expect(last).toBe(`tool result for c: "${'x'.repeat(98)}…"`);
    const calls = Array.from({ length: 30 }, (_, i) => ({ function: { name: `t${i}` } }));
    const many = read('chat', { messages: [{ role: 'assistant', tool_calls: calls }] }).last;
    expect(many).toBe(
      'assistant: tool calls t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, … (30 in all)',
    );
  });

  it('PB-02 problems in words for bodies that are not chat requests', () => {
    expect(problem('chat', {})).toBe(
      'the body has no `messages` array, which a chat completions request has',
    );
    expect(problem('chat', { messages: 'hi' })).toBe(
      'the body\'s `messages` is "hi" (string), not the array a chat completions request has',
    );
    expect(problem('chat', null)).toBe(
      'the body is null, not the JSON object a chat completions request is',
    );
    expect(problem('chat', undefined)).toContain('the body is undefined');
    expect(problem('chat', [1, 2])).toContain('the body is [1,2] (array)');
    expect(problem('chat', 'text')).toContain('"text" (string)');
  });
});

describe('Responses API', () => {
  it('PB-01 PB-02 a string input is the prompt; instructions are not user text', () => {
    expect(
      read('responses', { model: 'gpt-test', input: 'List files', instructions: 'Be terse.' }),
    ).toEqual({
      format: 'responses',
      stream: false,
      model: 'gpt-test',
      includeUsage: false,
      prompt: 'List files',
      results: [],
      last: 'user: "List files"',
    });
  });

  it('PB-02 user message items with or without a type; input_text, output_text and text parts', () => {
    const input = [
      { role: 'developer', content: 'rules' },
      { type: 'message', role: 'user', content: 'first' },
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'one ' },
          { type: 'input_image', image_url: 'data:,' },
          { type: 'output_text', text: 'two ' },
          { type: 'text', text: 'three' },
          { type: 'refusal', text: 'not this' },
        ],
      },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] },
      { type: 'item_reference', role: 'user', content: 'not a message' },
    ];
    const got = read('responses', { stream: true, input });
    expect(got).toMatchObject({ stream: true, prompt: 'one two three' });
    expect(got.last).toBe('item_reference item');
    expect(read('responses', { input: input.slice(0, 4) }).last).toBe('assistant: "ok"');
  });

  it('PB-02 PB-03 function_call_output items: output as sent, text of the content items joined', () => {
    const output = [
      { type: 'input_text', text: 'file1' },
      { type: 'input_image', image_url: 'x' },
      { type: 'input_text', text: '.txt' },
    ];
    // As a client with previous_response_id sends it: only the new items.
    const body = {
      previous_response_id: 'resp_1',
      input: [
        { type: 'function_call', call_id: 'call_1', name: 'bash', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'a\nb' },
        { type: 'function_call_output', call_id: 'call_2', output },
        { type: 'function_call_output', output: 'no id' },
        { type: 'function_call_output', call_id: 'call_3' },
      ],
    };
    const got = read('responses', body);
    expect(got.prompt).toBeUndefined();
    expect(got.results).toEqual([
      { toolCallId: 'call_1', content: 'a\nb', text: 'a\nb', isError: false },
      { toolCallId: 'call_2', content: output, text: 'file1.txt', isError: false },
      { toolCallId: 'call_3', content: undefined, text: '', isError: false },
    ]);
    expect(got.last).toBe('tool result for call_3: ""');
    expect(read('responses', { input: body.input.slice(0, 1) }).last).toBe(
      'assistant: tool call bash',
    );
  });

  it('PB-02 problems in words for bodies that are not Responses requests', () => {
    expect(problem('responses', { messages: [] })).toBe(
      'the body has no `input` (a string or an array of items), which a Responses API request has',
    );
    expect(problem('responses', { input: 5 })).toBe(
      "the body's `input` is 5 (number), not the string or array of items a Responses API request has",
    );
    expect(problem('responses', 5)).toBe(
      'the body is 5 (number), not the JSON object a Responses API request is',
    );
  });
});

describe('Anthropic Messages', () => {
  it('PB-01 PB-02 text blocks joined; a last user message of only tool results is the empty prompt', () => {
    const messages = [
      { role: 'user', content: 'List files' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking.' },
          { type: 'tool_use', id: 'toolu_1', name: 'bash', input: {} },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'x' }] },
    ];
    const body = { model: 'claude-test', stream: true, system: 'sys', messages };
    expect(read('messages', body)).toMatchObject({
      format: 'messages',
      stream: true,
      model: 'claude-test',
      includeUsage: false,
      prompt: '',
      last: 'tool result for toolu_1: "x"',
    });
    expect(read('messages', { ...body, messages: messages.slice(0, 2) })).toMatchObject({
      prompt: 'List files',
      last: 'assistant: tool call bash',
    });
    const mixed = {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: 'x' },
        { type: 'text', text: 'Now ' },
        { type: 'image', source: {} },
        { type: 'text', text: 'summarise.' },
      ],
    };
    const got = read('messages', { messages: [...messages.slice(0, 2), mixed] });
    expect(got.prompt).toBe('Now summarise.');
    expect(got.last).toBe('tool result for toolu_1: "x"; user: "Now summarise."');
    expect(
      read('messages', { stream_options: { include_usage: true }, messages }).includeUsage,
    ).toBe(false);
  });

  it('PB-02 PB-03 tool_result blocks: content string, text blocks or absent; is_error only when true', () => {
    const blocks = [
      { type: 'text', text: 'per' },
      { type: 'image' },
      { type: 'text', text: 'mission' },
    ];
    const content = [
      { type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' },
      { type: 'tool_result', tool_use_id: 'toolu_2', content: blocks, is_error: true },
      { type: 'tool_result', tool_use_id: 'toolu_3' },
      { type: 'tool_result', tool_use_id: 'toolu_4', content: 'no', is_error: 'true' },
      { type: 'tool_result', content: 'no id' },
    ];
    const got = read('messages', {
      messages: [
        {
          role: 'assistant',
          content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'not a user message' }],
        },
        { role: 'user', content },
      ],
    });
    expect(got.results).toEqual([
      { toolCallId: 'toolu_1', content: 'ok', text: 'ok', isError: false },
      { toolCallId: 'toolu_2', content: blocks, text: 'permission', isError: true },
      { toolCallId: 'toolu_3', content: undefined, text: '', isError: false },
      { toolCallId: 'toolu_4', content: 'no', text: 'no', isError: false },
    ]);
    expect(got.prompt).toBe('');
    expect(got.last).toBe(
      'tool results for toolu_1: "ok", toolu_2 (error): "permission", toolu_3: "", toolu_4: "no", (id undefined): "no id"',
    );
  });

  it('PB-02 problems in words for bodies that are not Messages requests', () => {
    expect(problem('messages', { input: 'hi' })).toBe(
      'the body has no `messages` array, which an Anthropic Messages request has',
    );
    expect(problem('messages', true)).toBe(
      'the body is true (boolean), not the JSON object an Anthropic Messages request is',
    );
  });
});

describe('hostile bodies', () => {
  it('PB-02 null entries, numbers, non-string roles and content of the wrong type are skipped, not thrown on', () => {
    for (const format of ['chat', 'messages'] as const) {
      expect(read(format, { messages: [null, 5, { role: {} }] })).toMatchObject({
        prompt: undefined,
        results: [],
        last: 'a message with role {} (object): ""',
      });
      expect(read(format, { messages: [{ role: 'user', content: 'a' }, null] }).last).toBe(
        'not a message: null',
      );
      const odd = [
        { role: 'user', content: 5 },
        { role: 'user', content: [null, 7, 'str', { type: 'text', text: 9 }, { type: 'text' }] },
        { role: 'tool', tool_call_id: 'c', content: { text: 'x' } },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'u', content: 42 }] },
      ];
      const got = read(format, { messages: odd, stream_options: 'x' });
      expect(got.prompt).toBe('');
      expect(got.results).toEqual(
        format === 'chat'
          ? [{ toolCallId: 'c', content: { text: 'x' }, text: '', isError: false }]
          : [{ toolCallId: 'u', content: 42, text: '', isError: false }],
      );
    }
    expect(read('responses', { input: [null, [], 'x', { type: {} }] }).last).toBe(
      'an item of type {} (object)',
    );
    expect(read('responses', { input: [{ role: 'user', content: null }] }).prompt).toBe('');
  });

  it('PB-02 values no JSON body can be (a throwing getter, a revoked proxy) give a problem, not an exception', () => {
    const throwing = {
      get messages(): unknown {
        throw new Error('boom');
      },
    };
    expect(problem('chat', throwing)).toBe('the body could not be read: boom');
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    expect(problem('messages', revoked.proxy)).toContain('the body could not be read');
    expect(problem('bogus' as 'chat', {})).toBe('unknown model format "bogus" (string)');
  });

  it('PB-02 values nested too deep to print (JSON.parse makes them) are named, not thrown on', () => {
    const deep = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`) as unknown;
    expect(read('chat', { messages: [deep] }).last).toBe(
      'not a message: an array nested too deep to show',
    );
    expect(problem('chat', { messages: { deep } })).toBe(
      "the body's `messages` is an object nested too deep to show, not the array a chat completions request has",
    );
    expect(read('messages', { messages: [{ role: deep }] }).last).toBe(
      'a message with role an array nested too deep to show: ""',
    );
  });

  it('PB-02 a request of 200 000 messages reads in one pass', () => {
    const messages = Array.from({ length: 200_000 }, (_, i) =>
      i % 2 === 0
        ? { role: 'user', content: [{ type: 'text', text: `m${i}` }] }
        : { role: 'tool', tool_call_id: `c${i}`, content: 'r' },
    );
    const got = read('chat', { messages });
    expect(got.prompt).toBe('m199998');
    expect(got.results).toHaveLength(100_000);
    expect(got.last).toBe('tool result for c199999: "r"');
  });
});

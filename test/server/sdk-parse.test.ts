// The builders' bytes through the real SDKs (HT-08): openai 6.49.0 and
// @anthropic-ai/sdk 1.16.0 stream from a bare node:http server in a child
// process (test/fixtures/sse-server.mjs) that writes each encoded piece of a
// toWireResponse() result as one chunk. Retries (wire-formats.md §6): a 429
// with retry-after-ms is retried once; x-should-retry: false stops a 500.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { type MockServerResponse, reply, sse } from '../../src/index.js';
import { toWireResponse } from '../../src/server/response.js';
import { spawnTracked, testDir } from '../helpers/index.js';

const FIXTURE = join(import.meta.dirname, '../fixtures/sse-server.mjs');

interface SeenRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
}

interface Server {
  url: string;
  requests(): Promise<SeenRequest[]>;
}

/** Start the fixture serving `responses` in order; it is killed when the test finishes. */
async function serve(...responses: MockServerResponse[]): Promise<Server> {
  const script = responses.map((r, i) => {
    const wire = toWireResponse(r, `response #${i + 1}`);
    return { ...wire, pieces: wire.pieces.map((p) => Buffer.from(p).toString('base64')) };
  });
  const file = join(testDir('shimkit-sdk-'), 'script.json');
  writeFileSync(file, JSON.stringify(script));
  const child = spawnTracked(process.execPath, [FIXTURE, file]);
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening (\d+)\n/.exec(out);
      if (match) resolve(Number(match[1]));
    });
    let err = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.on('close', (code) =>
      reject(new Error(`sse-server exited (${code}) before listening: ${err}`)),
    );
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    requests: async () => (await (await fetch(`${url}/__requests`)).json()) as SeenRequest[],
  };
}

const openai = (server: Server, maxRetries = 0) =>
  new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'shimkit-test', maxRetries, timeout: 5000 });
const anthropic = (server: Server, maxRetries = 0) =>
  new Anthropic({ baseURL: server.url, apiKey: 'shimkit-test', maxRetries, timeout: 5000 });
const chatParams = { model: 'shimkit-model', messages: [{ role: 'user' as const, content: 'hi' }] };
const messageParams = {
  model: 'shimkit-model',
  max_tokens: 100,
  messages: [{ role: 'user' as const, content: 'hi' }],
};

describe('the builders through the real SDKs', () => {
  it('HT-08 openai chat: text, tool calls and usage arrive in finalChatCompletion()', async () => {
    const server = await serve(
      sse.chat(['Hel', 'lo'], { includeUsage: true, usage: { prompt_tokens: 9 } }),
      sse.chat('Checking.', {
        toolCalls: [
          { name: 'get_weather', arguments: ['{"city":', '"Paris"}'] },
          { name: 'get_time', arguments: { tz: 'CET' } },
        ],
      }),
    );
    const client = openai(server);
    const text = await client.chat.completions
      .stream({ ...chatParams, stream_options: { include_usage: true } })
      .finalChatCompletion();
    expect(text.choices[0]?.message.content).toBe('Hello');
    expect(text.choices[0]?.finish_reason).toBe('stop');
    expect(text.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 });
    expect(text).toMatchObject({
      id: 'chatcmpl-shimkit-1',
      model: 'shimkit-model',
      created: 1700000000,
    });
    const tools = await client.chat.completions.stream(chatParams).finalChatCompletion();
    const message = tools.choices[0]?.message;
    expect(message?.content).toBe('Checking.');
    expect(tools.choices[0]?.finish_reason).toBe('tool_calls');
    expect(message?.tool_calls).toEqual([
      {
        id: 'call_shimkit_1',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
      },
      {
        id: 'call_shimkit_2',
        type: 'function',
        function: { name: 'get_time', arguments: '{"tz":"CET"}' },
      },
    ]);
  });

  it('HT-08 openai chat: the error chunk throws APIError with its message and type, after the deltas', async () => {
    const server = await serve(
      sse.chat('Hel', { error: { message: 'scripted boom', code: 'e42' } }),
    );
    const stream = await openai(server).chat.completions.create({ ...chatParams, stream: true });
    const seen: string[] = [];
    const run = async () => {
      for await (const chunk of stream) seen.push(chunk.choices[0]?.delta.content ?? '');
    };
    const error = await run().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error).toMatchObject({
      message: 'scripted boom',
      type: 'server_error',
      code: 'e42',
      status: undefined,
    });
    expect(seen.join('')).toBe('Hel');
  });

  it('HT-08 openai responses: text, reasoning summary and function calls via responses.stream()', async () => {
    const server = await serve(
      sse.responses(['Hel', 'lo']),
      sse.responses('Sunny.', {
        reasoning: ['Check ', 'the weather.'],
        functionCalls: [{ name: 'get_weather', arguments: ['{"city":', '"Paris"}'] }],
      }),
    );
    const client = openai(server);
    const text = await client.responses
      .stream({ model: 'shimkit-model', input: 'hi' })
      .finalResponse();
    expect(text.output_text).toBe('Hello');
    expect(text.status).toBe('completed');
    expect(text.usage).toMatchObject({ input_tokens: 9, output_tokens: 2, total_tokens: 11 });
    const deltas: string[] = [];
    const stream = client.responses.stream({ model: 'shimkit-model', input: 'hi' });
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    const full = await stream.finalResponse();
    expect(deltas).toEqual(['Sunny.']);
    expect(full.output_text).toBe('Sunny.');
    expect(full.output.map((item) => item.type)).toEqual(['reasoning', 'message', 'function_call']);
    expect(full.output[0]).toMatchObject({
      summary: [{ type: 'summary_text', text: 'Check the weather.' }],
    });
    expect(full.output[2]).toMatchObject({
      call_id: 'call_shimkit_1',
      name: 'get_weather',
      arguments: '{"city":"Paris"}',
    });
  });

  it('HT-08 openai responses: reasoningText, the error event and response.failed as the SDK sees them', async () => {
    const server = await serve(
      sse.responses('ok', { reasoningText: ['Let me ', 'think.'] }),
      sse.responses('Hel', { error: { code: 'server_error', message: 'boom' } }),
      sse.responses('Hel', { failed: { code: 'server_error', message: 'it failed' } }),
    );
    const client = openai(server);
    const reasoned = await client.responses
      .stream({ model: 'shimkit-model', input: 'hi' })
      .finalResponse();
    expect(reasoned.output[0]).toMatchObject({
      type: 'reasoning',
      content: [{ type: 'reasoning_text', text: 'Let me think.' }],
    });
    expect(reasoned.output_text).toBe('ok');
    // The core Stream yields an `error` event (its JSON has no `error` member); the stream ends there.
    const events = await client.responses.create({
      model: 'shimkit-model',
      input: 'hi',
      stream: true,
    });
    const types: string[] = [];
    let last: unknown;
    for await (const event of events) {
      types.push(event.type);
      last = event;
    }
    expect(types.at(-1)).toBe('error');
    expect(last).toMatchObject({
      type: 'error',
      code: 'server_error',
      message: 'boom',
      sequence_number: 5,
    });
    const failed = await client.responses
      .stream({ model: 'shimkit-model', input: 'hi' })
      .finalResponse();
    expect(failed.status).toBe('failed');
    expect(failed.error).toEqual({ code: 'server_error', message: 'it failed' });
  });

  it('HT-08 anthropic messages: text, thinking, tool_use input and usage in finalMessage()', async () => {
    const server = await serve(
      sse.messages(['Hello', ' there', '!']),
      sse.messages('Checking.', {
        thinking: { text: ['Check ', 'the weather.'] },
        toolUse: [{ name: 'get_weather', input: ['{"city":', '"Paris"}'] }],
        usage: { input_tokens: 21, output_tokens: 12 },
      }),
    );
    const client = anthropic(server);
    const text = await client.messages.stream(messageParams).finalMessage();
    expect(text.content).toHaveLength(1);
    expect(text.content[0]).toMatchObject({ type: 'text', text: 'Hello there!' });
    expect(text).toMatchObject({
      id: 'msg_shimkit_1',
      model: 'shimkit-model',
      stop_reason: 'end_turn',
    });
    expect(text.usage).toMatchObject({ input_tokens: 9, output_tokens: 3 });
    const tool = await client.messages.stream(messageParams).finalMessage();
    expect(tool.stop_reason).toBe('tool_use');
    expect(tool.content.map((b) => b.type)).toEqual(['thinking', 'text', 'tool_use']);
    expect(tool.content[0]).toMatchObject({
      thinking: 'Check the weather.',
      signature: 'c2hpbWtpdA==',
    });
    expect(tool.content[2]).toMatchObject({
      id: 'toolu_shimkit_1',
      name: 'get_weather',
      input: { city: 'Paris' },
    });
    expect(tool.usage).toMatchObject({ input_tokens: 21, output_tokens: 12 });
  });

  it('HT-08 anthropic messages: event: error throws APIError with the error type, after the text so far', async () => {
    const server = await serve(
      sse.messages('Hel', { error: { type: 'overloaded_error', message: 'Overloaded' } }),
    );
    const stream = anthropic(server).messages.stream(messageParams);
    const seen: string[] = [];
    stream.on('text', (delta) => seen.push(delta));
    const error = await stream.finalMessage().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect(error).toMatchObject({ type: 'overloaded_error', status: undefined });
    expect(String((error as Error).message)).toContain('Overloaded');
    expect(seen).toEqual(['Hel']);
  });

  it('HT-08 reply.status(429, { retryAfterMs: 1 }): each SDK retries once, then streams the success', async () => {
    const server = await serve(
      reply.status(429, { retryAfterMs: 1 }),
      sse.chat('ok'),
      reply.status(429, { retryAfterMs: 1 }),
      sse.messages('ok'),
    );
    const chat = await openai(server, 1).chat.completions.stream(chatParams).finalChatCompletion();
    expect(chat.choices[0]?.message.content).toBe('ok');
    const message = await anthropic(server, 1).messages.stream(messageParams).finalMessage();
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'ok' });
    const seen = await server.requests();
    expect(seen.map((r) => [r.url, r.headers['x-stainless-retry-count']])).toEqual([
      ['/v1/chat/completions', '0'],
      ['/v1/chat/completions', '1'],
      ['/v1/messages', '0'],
      ['/v1/messages', '1'],
    ]);
  });

  it('HT-08 reply.status: x-should-retry false on a 500 stops both SDKs; the error body is read', async () => {
    const stop = reply.status(500, {
      headers: { 'x-should-retry': 'false' },
      message: 'scripted 500',
    });
    const server = await serve(stop, stop);
    const chat = await openai(server, 2)
      .chat.completions.create(chatParams)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(chat).toBeInstanceOf(OpenAI.InternalServerError);
    expect(chat).toMatchObject({ status: 500, message: '500 scripted 500', type: 'api_error' });
    const message = await anthropic(server, 2)
      .messages.create(messageParams)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(message).toBeInstanceOf(Anthropic.InternalServerError);
    expect(message).toMatchObject({ status: 500, type: 'api_error' });
    expect(String((message as Error).message)).toContain('scripted 500');
    expect(await server.requests()).toHaveLength(2);
  });
});

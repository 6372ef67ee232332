// Benchmark agent for `server.playbook`: `node playbook-agent.mjs <url> <conversations>`.
// A tool-calling agent on the openai SDK (chat completions, streamed): for
// each conversation it sends `task <n>`, answers every tool call with "ok",
// and asks again until the model answers with text. Prints {"ms":[…]}, each
// conversation's wall time.
import OpenAI from 'openai';

const [url, countText] = process.argv.slice(2);
const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'bench', maxRetries: 0 });
const tools = [
  {
    type: 'function',
    function: {
      name: 'bash',
      parameters: { type: 'object', properties: { command: { type: 'string' } } },
    },
  },
];

async function conversation(n) {
  const messages = [{ role: 'user', content: `task ${n}` }];
  for (;;) {
    const stream = await client.chat.completions.create({
      model: 'bench',
      messages,
      tools,
      stream: true,
    });
    let text = '';
    const calls = [];
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      if (delta?.content) text += delta.content;
      for (const t of delta?.tool_calls ?? []) {
        calls[t.index] ??= { id: t.id, type: 'function', function: { name: '', arguments: '' } };
        if (t.function?.name) calls[t.index].function.name = t.function.name;
        if (t.function?.arguments) calls[t.index].function.arguments += t.function.arguments;
      }
    }
    if (calls.length === 0) return text;
    messages.push({ role: 'assistant', content: null, tool_calls: calls });
    for (const call of calls) messages.push({ role: 'tool', tool_call_id: call.id, content: 'ok' });
  }
}

const ms = [];
for (let n = 0; n < Number(countText); n++) {
  const start = performance.now();
  const text = await conversation(n);
  ms.push(performance.now() - start);
  if (text !== 'done')
    throw new Error(`bench: conversation ${n} ended with ${JSON.stringify(text)}`);
}
process.stdout.write(`${JSON.stringify({ ms })}\n`);

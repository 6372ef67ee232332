// A small tool-calling coding agent, the program under test of the README's
// agent playbook example: `node tool-agent.mjs PROMPT` asks the model (OpenAI
// chat completions; OPENAI_BASE_URL, OPENAI_API_KEY, as any agent reads them)
// and runs each `bash` command it calls for, for real, in the current
// directory, sending the output back, until the model answers with text. It
// prints each command to stderr as `$ COMMAND` and the answer to stdout. On an
// error it prints `agent: <message>` to stderr and exits 1.
import { spawnSync } from 'node:child_process';
import OpenAI from 'openai';

const client = new OpenAI({ timeout: 20_000 }); // retries 429 and 5xx twice, as the SDK does by default
const tools = [
  {
    type: 'function',
    function: {
      name: 'bash',
      description: 'Run a shell command in the project directory and get its output.',
      parameters: {
        type: 'object',
        properties: { command: { type: 'string' } },
        required: ['command'],
      },
    },
  },
];
const messages = [
  {
    role: 'system',
    content: 'You are a coding agent. Use bash to look at and change the project.',
  },
  { role: 'user', content: process.argv.slice(2).join(' ') },
];

/** Run a command with bash in the current directory: its output, and how it failed. */
function bash(command) {
  const result = spawnSync('bash', ['-c', command], { encoding: 'utf8', timeout: 60_000 });
  const output = (result.stdout ?? '') + (result.stderr ?? '');
  return result.status === 0 ? output : `${output}\n(exit ${result.status ?? result.signal})`;
}

try {
  for (;;) {
    const completion = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages,
      tools,
    });
    const message = completion.choices[0].message;
    messages.push(message); // the assistant's turn, tool calls included, goes back with the results
    if (!message.tool_calls?.length) {
      process.stdout.write(`${message.content ?? ''}\n`);
      break;
    }
    for (const call of message.tool_calls) {
      const { command } = JSON.parse(call.function.arguments);
      process.stderr.write(`$ ${command}\n`);
      messages.push({ role: 'tool', tool_call_id: call.id, content: bash(command) });
    }
  }
} catch (error) {
  process.stderr.write(`agent: ${error.message}\n`);
  process.exitCode = 1;
}

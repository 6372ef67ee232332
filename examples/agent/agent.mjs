// A tiny coding-agent CLI, the program under test of the README's mock server
// examples: `node agent.mjs PROMPT` streams one chat completion from the
// OpenAI API (OPENAI_BASE_URL, OPENAI_API_KEY, as any agent reads them) and
// prints its text as it arrives, then a newline. On an error it prints
// `agent: <message>` to stderr and exits 1.
import OpenAI from 'openai';

const prompt = process.argv.slice(2).join(' ');
const client = new OpenAI({ timeout: 20_000 }); // retries 429 and 5xx twice, as the SDK does by default

try {
  const stream = await client.chat.completions.create({
    model: 'gpt-4o-mini',
    stream: true,
    messages: [{ role: 'user', content: prompt }],
  });
  for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta?.content ?? '');
  process.stdout.write('\n');
} catch (error) {
  process.stderr.write(`agent: ${error.message}\n`);
  process.exitCode = 1;
}

'use strict';
// The mock server on Windows, for real (Wine 10): createMockServer() in
// node.exe (its worker thread included), and a node.exe child that reads its
// base URL and key from env() and streams a chat completion from it, as the
// program under test would.
const test = require('node:test');
const assert = require('node:assert/strict');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { shimkit, tempDir, own } = require('./helpers.cjs');

const { calls, createMockServer, run, says, sse, when } = shimkit;

/** A client that POSTs to $OPENAI_BASE_URL/chat/completions and prints the streamed text deltas. */
function client(dir) {
  const file = join(dir, 'stream-client.js');
  writeFileSync(
    file,
    `const http = require('node:http');
     const url = new URL(process.env.OPENAI_BASE_URL + '/chat/completions');
     const req = http.request(url, { method: 'POST', headers: {
       'content-type': 'application/json', authorization: 'Bearer ' + process.env.OPENAI_API_KEY } }, (res) => {
       let rest = '';
       let text = '';
       res.setEncoding('utf8');
       res.on('data', (chunk) => {
         rest += chunk;
         for (let at = rest.indexOf('\\n\\n'); at !== -1; at = rest.indexOf('\\n\\n')) {
           const data = rest.slice(0, at).replace(/^data: /, '');
           rest = rest.slice(at + 2);
           if (data !== '[DONE]') text += JSON.parse(data).choices[0]?.delta?.content ?? '';
         }
       });
       res.on('end', () => process.stdout.write(JSON.stringify({ status: res.statusCode, text })));
     });
     req.end(JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }));`,
  );
  return file;
}

test('HT-01 a node.exe child streams a chat completion from the server through env()', async (t) => {
  const dir = tempDir(t);
  const api = own(t, await createMockServer({ strict: true }));
  api.expect(
    { method: 'POST', path: '/v1/chat/completions', json: { stream: true } },
    sse.chat(['Hel', 'lo', ' from Wine'], { eventDelayMs: 20 }),
    { name: 'turn' },
  );
  const result = await run(process.execPath, [client(dir)], {
    env: api.env(),
    timeoutMs: 60_000,
  });
  assert.equal(result.exitCode, 0, result.stderr);
  assert.deepEqual(JSON.parse(result.stdout), { status: 200, text: 'Hello from Wine' });
  const [request] = api.requests();
  assert.equal(request.claimedBy, 'turn');
  assert.equal(request.headers.authorization, 'Bearer shimkit-test');
  assert.equal(request.response.endedBy, 'complete');
  api.assertDone();
});

test('PB-01 a playbook plays the model for a node.exe agent: a tool call, its result, then text', async (t) => {
  const dir = tempDir(t);
  const api = own(t, await createMockServer({ strict: true }));
  const play = api.playbook([
    when('dir?', [calls('shell', { command: 'dir' }), says('Two files.')]),
  ]);
  const agent = join(dir, 'agent.js');
  writeFileSync(
    agent,
    `const ask = async (messages) => {
       const r = await fetch(process.env.OPENAI_BASE_URL + '/chat/completions', {
         method: 'POST',
         headers: { 'content-type': 'application/json', authorization: 'Bearer ' + process.env.OPENAI_API_KEY },
         body: JSON.stringify({ model: 'm', messages }),
       });
       return (await r.json()).choices[0].message;
     };
     (async () => {
       const messages = [{ role: 'user', content: 'dir?' }];
       const call = await ask(messages);
       const id = call.tool_calls[0].id;
       messages.push(call, { role: 'tool', tool_call_id: id, content: 'a.txt\\r\\nb.txt' });
       const answer = await ask(messages);
       process.stdout.write(JSON.stringify({ id, text: answer.content }));
     })();`,
  );
  const result = await run(process.execPath, [agent], { env: api.env(), timeoutMs: 60_000 });
  assert.equal(result.exitCode, 0, result.stderr);
  assert.deepEqual(JSON.parse(result.stdout), { id: 'call_shimkit_p1_s1_1', text: 'Two files.' });
  assert.deepEqual(
    play.toolResults().map((r) => [r.toolName, r.text]),
    [['shell', 'a.txt\r\nb.txt']],
  );
  play.assertDone();
  api.assertDone();
});

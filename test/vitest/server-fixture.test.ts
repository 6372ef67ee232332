// shimkit/vitest's mockServer fixture and the toHaveReceivedRequest matcher
// (HT-11): strict, disposed after each test even when it fails, clients in
// other processes (curl).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe } from 'vitest';
import { calls, type MockServer, reply, says, sse, when } from '../../src/index.js';
import { expect, test } from '../../src/vitest/index.js';
import { runCommand, testDir } from '../helpers/index.js';

const made: MockServer[] = [];
afterAll(() => {
  // Every server a fixture made was disposed when its test ended, failed or not: nothing listens.
  for (const api of made) {
    const r = spawnSync('curl', ['-s', '--max-time', '10', `${api.url}/`]);
    expect(r.status, api.url).toBe(7); // curl: failed to connect
  }
});

/** POST `body` as JSON to `url` with curl (another process), the reply's body as text. */
async function post(url: string, body: unknown): Promise<{ code: number; out: string }> {
  const r = await runCommand('curl', [
    '-sN',
    '-H',
    'content-type: application/json',
    '-d',
    JSON.stringify(body),
    url,
  ]);
  return { code: r.code ?? -1, out: r.stdout.toString() };
}

describe('shimkit/vitest mockServer', () => {
  test('HT-11 the mockServer fixture serves another process and toHaveReceivedRequest says what differs', async ({
    mockServer,
  }) => {
    const api = await mockServer();
    made.push(api);
    api.expect({ method: 'POST', path: '/v1/chat/completions' }, sse.chat('hi'), { name: 'turn' });
    const r = await post(`${api.url}/v1/chat/completions`, { model: 'm', stream: true });
    expect(r.code).toBe(0);
    expect(r.out).toContain('data: [DONE]');
    expect(api).toHaveReceivedRequest({ path: '/v1/chat/completions', json: { stream: true } });
    expect(api).not.toHaveReceivedRequest({ method: 'GET' });
    expect(api).toHaveReceivedRequest({ predicate: (req) => req.claimedBy === 'turn' });
    expect(() => expect(api).toHaveReceivedRequest({ json: { model: 'gpt-5' } })).toThrow(
      /none did:\n {2}#1 POST \/v1\/chat\/completions → 'turn', 200, complete: json\.model: expected "gpt-5", got "m"/,
    );
    expect(() => expect(api).not.toHaveReceivedRequest({ path: '/v1/chat/completions' })).toThrow(
      'but request #1 did',
    );
    expect(() => expect({}).toHaveReceivedRequest({})).toThrow('expects a MockServer');
  });

  test('HT-11 with no request at all the matcher says so', async ({ mockServer }) => {
    const api = await mockServer();
    made.push(api);
    expect(() => expect(api).toHaveReceivedRequest({ path: '/v1/models' })).toThrow(
      'but it received none',
    );
  });

  test.fails('HT-11 an unused response of a fixture server fails the test when it is disposed', async ({
    mockServer,
  }) => {
    const api = await mockServer();
    made.push(api);
    api.enqueue(reply.json({ never: 'asked for' }));
  });

  test.fails('HT-11 under the fixture (strict) an unmatched request fails the test at dispose', async ({
    mockServer,
  }) => {
    const api = await mockServer();
    made.push(api);
    const r = await post(`${api.url}/v1/responses`, { model: 'm' });
    expect(r.out).toContain('shimkit_unmatched'); // the client got the 500; the test body passes
  });

  test('HT-11 given unmatched, the fixture server is not strict', async ({ mockServer }) => {
    const api = await mockServer({ unmatched: 'echo' });
    made.push(api);
    const r = await post(`${api.url}/v1/chat/completions`, {
      model: 'm',
      messages: [{ role: 'user', content: 'ping' }],
    });
    expect(r.code).toBe(0);
    expect(api.requests()[0]?.claimedBy).toBeNull();
  });

  test("HT-11 a function response the test never answers ends at a server timeout below the test's", {
    timeout: 3000,
  }, async ({ mockServer }) => {
    const api = await mockServer({ unmatched: 'fail' });
    made.push(api);
    api.expect({ path: '/slow' }, () => new Promise(() => {}), { optional: true });
    const r = await post(`${api.url}/slow`, {});
    expect(r.out).toContain('2000 ms');
  });

  test('PB-07 the mockServer fixture plays a playbook for an agent in another process; toHaveReceivedToolResult says what came', async ({
    mockServer,
  }) => {
    const api = await mockServer();
    made.push(api);
    const play = api.playbook([
      when('Where am I?', [calls('bash', { command: 'echo /srv/app' }), says('In /srv/app.')]),
    ]);
    const agent = join(import.meta.dirname, '../fixtures/tool-agent.mjs');
    const r = await runCommand(process.execPath, [agent, '--api', 'chat', 'Where am I?'], {
      env: api.env(),
      cwd: testDir(),
    });
    expect(JSON.parse(r.stdout.toString()).turns[0].text).toBe('In /srv/app.');
    expect(play).toHaveReceivedToolResult('bash', '/srv/app\n');
    expect(play).toHaveReceivedToolResult('bash', { text: /srv/, isError: false, step: 1 });
    expect(play).not.toHaveReceivedToolResult('read');
    expect(() => expect(play).toHaveReceivedToolResult('bash', /nowhere/)).toThrow(
      `expected playbook 'playbook#1' to have received a result of "bash" as expected; none was:\n  #2 step 1 bash call_shimkit_p1_s1_1 "/srv/app\\n": text: expected /nowhere/, got "/srv/app\\n"`,
    );
    expect(() => expect(play).not.toHaveReceivedToolResult('bash')).toThrow(
      'but request #2 carried one',
    );
  });
});

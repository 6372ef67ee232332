// shimkit/jest (VT-02): the shimkit matchers through jest's expect.extend,
// the node:test-style dispose in afterEach. Run by test/jest/runs.test.ts.
const { execFileSync } = require('node:child_process');
require('shimkit/jest'); // the package's own export, as a user's setup file would
const { any, createMockBinary } = require('shimkit');

describe('on a mock binary', () => {
  let git;
  beforeEach(() => {
    git = createMockBinary('git', {
      strict: true,
      responses: [{ match: { argsPrefix: ['push'] } }],
    });
  });
  afterEach(() => git.dispose());

  test('toHaveBeenCalledWithArgs and toHaveConsumedAllResponses', () => {
    execFileSync('git', ['push', 'origin', 'main'], { env: git.env() });
    expect(git).toHaveBeenCalledWithArgs(['push', 'origin', any()]);
    expect(git).not.toHaveBeenCalledWithArgs(['pull']);
    expect(git).toHaveConsumedAllResponses();
    expect(() => expect(git).toHaveBeenCalledWithArgs(['push', 'upstream', 'main'])).toThrow(
      'the last call differs at arg 2: expected "upstream", got "origin"',
    );
  });
});

test('toHaveReceivedRequest on a mock server', async () => {
  const { createMockServer, reply } = require('shimkit');
  const api = await createMockServer({ strict: true });
  try {
    api.enqueue(reply.json({ ok: true }));
    execFileSync('curl', [
      '-sf',
      '-H',
      'content-type: application/json',
      '-d',
      '{"stream":false}',
      `${api.url}/v1/chat/completions`,
    ]);
    expect(api).toHaveReceivedRequest({
      method: 'POST',
      path: '/v1/chat/completions',
      json: { stream: false },
    });
    expect(api).not.toHaveReceivedRequest({ path: '/v1/responses' });
    expect(() => expect(api).toHaveReceivedRequest({ json: { stream: true } })).toThrow(
      'json.stream: expected true, got false',
    );
  } finally {
    await api.dispose();
  }
});

test('toHaveReceivedToolResult on a playbook', async () => {
  const { createMockServer, calls, says, when } = require('shimkit');
  const api = await createMockServer({ strict: true });
  try {
    const play = api.playbook([when('go', [calls('bash', { command: 'ls' }), says('ok')])]);
    const post = (messages) =>
      execFileSync('curl', [
        '-sf',
        '-H',
        'content-type: application/json',
        '-d',
        JSON.stringify({ model: 'm', messages }),
        `${api.url}/v1/chat/completions`,
      ]);
    const user = { role: 'user', content: 'go' };
    const first = JSON.parse(post([user]).toString());
    post([
      user,
      first.choices[0].message,
      { role: 'tool', tool_call_id: 'call_shimkit_p1_s1_1', content: 'a.txt' },
    ]);
    expect(play).toHaveReceivedToolResult('bash', 'a.txt');
    expect(play).not.toHaveReceivedToolResult('bash', { isError: true });
    expect(() => expect(play).toHaveReceivedToolResult('bash', /b\.txt/)).toThrow(
      'text: expected /b\\.txt/, got "a.txt"',
    );
  } finally {
    await api.dispose();
  }
});

import { execFileSync, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { nextTurn, server } from '../helpers/server.js';

/** curl, synchronously: the test's thread is blocked until it exits. */
function curlSync(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const out = spawnSync('curl', ['-sS', '-N', '--noproxy', '*', '--max-time', '10', ...args], {
    encoding: 'utf8',
  });
  return { status: out.status, stdout: out.stdout, stderr: out.stderr };
}

describe('served while the test thread is blocked (HT-04)', () => {
  it('HT-04 execFileSync(curl) gets every scripted answer, and requests() right after is exact, with no await between', async () => {
    const api = await server({ strict: true });
    api.expect(
      { path: '/v1/chat' },
      { sse: [{ data: 'a' }, { data: 'b' }, { data: '[DONE]' }], eventDelayMs: 20 },
      { name: 'stream' },
    );
    api.enqueue([
      { json: { n: 1 }, delayMs: 50 },
      { status: 404, text: 'nope' },
    ]);
    // Everything below runs in one synchronous stretch: the worker alone serves.
    const script = `for p in /v1/chat /one /two; do curl -sS -N --noproxy '*' "$0$p"; echo; done`;
    const stdout = execFileSync('sh', ['-c', script, api.url], { encoding: 'utf8' });
    expect(stdout).toBe('data: a\n\ndata: b\n\ndata: [DONE]\n\n\n{"n":1}\nnope\n');
    const log = api.requests();
    expect(
      log.map((r) => [
        r.path,
        r.claimedBy,
        r.response.status,
        r.response.bytesSent,
        r.response.events,
        r.response.endedBy,
      ]),
    ).toEqual([
      ['/v1/chat', 'stream', 200, 32, 3, 'complete'],
      ['/one', 'fifo#1', 200, 7, 0, 'complete'],
      ['/two', 'fifo#2', 404, 4, 0, 'complete'],
    ]);
    api.assertDone();
  });

  it('HT-04 a cut seen by a spawnSync client is in the log when spawnSync returns: endedBy cut, the exact bytes and events', async () => {
    const api = await server();
    api.enqueue({
      sse: [{ data: 'x1' }, { data: 'x2' }, { data: 'x3' }],
      cut: { afterEvents: 2, how: 'fin' },
    });
    api.enqueue({ text: 'abcdefgh', cut: { afterBytes: 3, how: 'rst' } });
    const fin = curlSync([`${api.url}/a`]);
    const rst = curlSync([`${api.url}/b`]);
    const [a, b] = api.requests();
    expect([fin.status, fin.stdout]).toEqual([18, 'data: x1\n\ndata: x2\n\n']);
    expect([rst.status, rst.stdout]).toEqual([56, 'abc']);
    expect(a?.response).toMatchObject({ status: 200, events: 2, bytesSent: 20, endedBy: 'cut' });
    expect(b?.response).toMatchObject({ status: 200, events: 0, bytesSent: 3, endedBy: 'cut' });
  });

  it('HT-04 a function response times out while the thread is blocked: 500, x-should-retry: false, and a text that says why', async () => {
    const api = await server({ timeoutMs: 300 });
    let ran = 0;
    api.expect(
      { path: '/fn' },
      () => {
        ran++;
        return { text: 'too late' };
      },
      { name: 'live' },
    );
    const out = curlSync(['-i', `${api.url}/fn`]);
    expect(out.stdout).toMatch(/^HTTP\/1\.1 500 /);
    expect(out.stdout).toContain('x-should-retry: false');
    const message =
      "shimkit: the response function of expectation 'live' for GET /fn (request #1) did not answer within 300 ms. It runs on the test's thread: if that thread is blocked in execFileSync/spawnSync, run the program with spawn (or shimkit's run()) and await it; or raise timeoutMs of createMockServer().";
    expect(JSON.parse(out.stdout.split('\r\n\r\n')[1] as string).error.message).toBe(message);
    expect(api.requests()[0]).toMatchObject({
      claimedBy: 'live',
      error: message,
      response: { status: 500 },
    });
    // The expectation was claimed (exactly once) though its content never came.
    expect(api.requests()[0]?.claimedBy).toBe('live');
    api.requests(); // drains the question and the worker's drop of it
    await nextTurn();
    expect(ran).toBe(0); // the worker gave up on it first: it is not run late, after its request had its 500
  });

  it('HT-04 a predicate and the unmatched function time out the same way while the thread is blocked', async () => {
    const api = await server({ timeoutMs: 200, unmatched: () => ({ text: 'unused' }) });
    api.expect({ path: '/p', predicate: () => true }, { text: 'never served' }, { name: 'pred' });
    const predicate = curlSync([`${api.url}/p`]);
    expect(JSON.parse(predicate.stdout).error.message).toBe(
      "shimkit: the predicate of expectation 'pred' for GET /p (request #1) did not answer within 200 ms. It runs on the test's thread: if that thread is blocked in execFileSync/spawnSync, run the program with spawn (or shimkit's run()) and await it; or raise timeoutMs of createMockServer().",
    );
    const unmatched = curlSync([`${api.url}/other`]);
    expect(JSON.parse(unmatched.stdout).error.message).toMatch(
      /^shimkit: the unmatched function of createMockServer\(\) for GET \/other \(request #2\) did not answer within 200 ms\. It runs on the test's thread/,
    );
    expect(api.requests().map((r) => [r.claimedBy, r.response.status])).toEqual([
      [null, 500],
      [null, 500],
    ]);
  });

  it('HT-04 a hold is not released while the thread is blocked: 504 after timeoutMs, naming release() and the thread', async () => {
    const api = await server({ timeoutMs: 200 });
    api.enqueue({ text: 'held answer' });
    api.hold({ path: '/h' });
    const out = curlSync(['-i', `${api.url}/h`]);
    expect(out.stdout).toMatch(/^HTTP\/1\.1 504 /);
    expect(out.stdout).toContain('x-should-retry: false');
    const entry = api.requests()[0];
    expect(entry).toMatchObject({
      claimedBy: 'fifo#1',
      response: { status: 504, endedBy: 'complete' },
    });
    expect(entry?.error).toBe(
      "shimkit: the hold() on GET /h (request #1) was not released within 200 ms; release() runs on the test's thread — if it is blocked in execFileSync/spawnSync, run the program with spawn (or shimkit's run()) and await it.",
    );
  });
});

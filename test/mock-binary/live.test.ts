// Live handlers and holds (MB-16): calls answered from a function in the test
// process, and held until the test releases them, through real shims.
import { describe, expect, it } from 'vitest';
import { createMockBinary, MockExitCode, run } from '../../src/index.js';

describe('live handler and hold', () => {
  it('MB-16 handle() answers calls no queued response is left for; a matching queued response wins', async () => {
    await using git = createMockBinary('git', {
      responses: [{ match: { args: ['status'] }, stdout: 'queued\n' }],
    });
    const seen: string[][] = [];
    git.handle(async (call) => {
      seen.push(call.argv);
      if (call.argv[0] === 'rev-parse') return { stdout: 'abc123\n' };
      if (call.argv[0] === 'boom') throw new Error('no such fixture');
      return undefined; // none: the call is unmatched
    });
    const env = git.env();
    expect((await run('git', ['status'], { env })).stdout).toBe('queued\n');
    expect((await run('git', ['rev-parse', 'HEAD'], { env })).stdout).toBe('abc123\n');
    const none = await run('git', ['gc'], { env });
    expect(none.exitCode).toBe(MockExitCode.unmatched);
    const thrown = await run('git', ['boom'], { env });
    expect(thrown.exitCode).toBe(MockExitCode.broken);
    expect(thrown.stderr).toBe(
      'shimkit: mock "git" call #4: the handle() function threw: no such fixture\n',
    );
    expect(seen).toEqual([['rev-parse', 'HEAD'], ['gc'], ['boom']]); // status never reached it
    expect(git.calls().map((c) => c.responseSource)).toEqual(['queue', 'handler', 'none', 'none']);
  });

  it('MB-16 hold(): two parallel calls, released in reverse order, complete in reverse order', async () => {
    await using git = createMockBinary('git', {
      responses: [{ match: { argsPrefix: ['push'] }, stdout: 'pushed\n', times: 'always' }],
    });
    const env = git.env();
    const first = git.hold({ args: ['push', 'a'] });
    const second = git.hold({ args: ['push', 'b'] });
    const done: string[] = [];
    const a = run('git', ['push', 'a'], { env, timeoutMs: 20_000 }).then((r) =>
      done.push(`a ${r.stdout}`),
    );
    const b = run('git', ['push', 'b'], { env, timeoutMs: 20_000 }).then((r) =>
      done.push(`b ${r.stdout}`),
    );
    expect((await first.waitReceived({ timeoutMs: 10_000 })).argv).toEqual(['push', 'a']);
    expect((await second.waitReceived({ timeoutMs: 10_000 })).argv).toEqual(['push', 'b']);
    second.release(); // its queued response
    await b;
    expect(done).toEqual(['b pushed\n']); // a is still held
    first.release({ stdout: 'rejected\n', exitCode: 1 });
    await a;
    expect(done).toEqual(['b pushed\n', 'a rejected\n']);
  });

  it('MB-16 a held call that is never released ends at the mock timeout, saying why', async () => {
    await using git = createMockBinary('git', { timeoutMs: 1500 });
    git.hold();
    const r = await run('git', ['fetch'], { env: git.env(), timeoutMs: 20_000 });
    expect(r.exitCode).toBe(MockExitCode.timeout);
    expect(r.stderr).toContain(
      'timed out after 1500 ms waiting for the test process: a hold() never released it, or its handle() never answered',
    );
  });

  it('MB-16 a hold released before its call arrives lets it through at once; handlers survive reset()', async () => {
    await using git = createMockBinary('git');
    git.handle(() => ({ stdout: 'live\n' }));
    git.hold({ args: ['x'] }).release({ stdout: 'pre-released\n' });
    expect((await run('git', ['x'], { env: git.env() })).stdout).toBe('pre-released\n');
    git.reset();
    expect((await run('git', ['y'], { env: git.env() })).stdout).toBe('live\n');
    await expect(git.hold().waitReceived({ timeoutMs: 50 })).rejects.toThrow(
      'No call of mock "git" reached the hold within 50 ms',
    );
    expect(() => git.handle('nope' as never)).toThrow('to get a function (call) => response');
  });
});

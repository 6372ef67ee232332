// shimkit/vitest (VT-01, VT-02): fixtures through test.extend, disposed after
// each test even when it fails, strict by default; the matchers.
import { existsSync } from 'node:fs';
import { afterAll, describe } from 'vitest';
import { any } from '../../src/index.js';
import { expect, test } from '../../src/vitest/index.js';
import { runCommand } from '../helpers/index.js';

const made: string[] = [];
afterAll(() => {
  // Every dir a fixture made is gone once its test ended, failed or not.
  for (const dir of made) expect(existsSync(dir), dir).toBe(false);
});

describe('shimkit/vitest fixtures', () => {
  test('VT-01 mockBinary is strict and disposed after the test; the matchers say what differs', async ({
    mockBinary,
  }) => {
    const git = mockBinary('git', { responses: [{ match: { argsPrefix: ['push'] } }] });
    made.push(git.dir);
    const r = await runCommand('git', ['push', 'origin', 'main'], { env: git.env() });
    expect(r.code).toBe(0);
    const again = await runCommand('git', ['push'], { env: git.env() });
    expect(again.code).toBe(123); // strict: nothing repeats
    expect(git).toHaveBeenCalledWithArgs(['push', 'origin', any()]);
    expect(git).not.toHaveBeenCalledWithArgs(['pull']);
    expect(() => expect(git).toHaveBeenCalledWithArgs(['pull'])).toThrow(
      /expected mock "git" to have been called with \["pull"\]; the last call differs at arg 1: expected "pull", got "push"\ncalls \(2\):/,
    );
    expect(() => expect(git).toHaveConsumedAllResponses()).toThrow('1 call had no response (#2)');
    git.reset(); // forget it all, so the strict dispose passes
  });

  test("VT-01 a hung call ends at a mock timeout below the test timeout, with shimkit's diagnostic", {
    timeout: 3000,
  }, async ({ mockBinary }) => {
    const git = mockBinary('git', { responses: [{ hang: true }] });
    made.push(git.dir);
    const r = await runCommand('git', ['fetch'], { env: git.env() });
    expect(r.code).toBe(124);
    expect(r.stderr.toString()).toContain('timed out after 2000 ms hanging, as scripted');
  });

  test.fails('VT-01 an unused response of a fixture mock fails the test when it is disposed', ({
    mockBinary,
  }) => {
    const gh = mockBinary('gh', { responses: [{ stdout: 'never asked for\n' }] });
    made.push(gh.dir);
  });

  test.fails('VT-01 a strict mock failing at dispose still lets the sandbox and its processes go', async ({
    sandbox,
    mockBinary,
  }) => {
    const sb = sandbox();
    const git = mockBinary('git', { responses: [{ stdout: 'unused\n' }] });
    made.push(sb.root, git.dir);
  });

  test('VT-01 mockBinDir, sandbox and frameProxy fixtures', async ({
    mockBinDir,
    sandbox,
    frameProxy,
  }) => {
    const bin = mockBinDir();
    bin.mock('docker', { responses: [{ stdout: 'built\n' }] });
    const sb = sandbox();
    sb.use(bin);
    made.push(bin.dir, sb.root);
    const r = await runCommand('docker', ['build'], { env: sb.env() });
    expect(r.stdout.toString()).toBe('built\n');
    const { createServer, connect } = await import('node:net');
    const server = createServer((s) => {
      s.on('error', () => {}); // reset when the proxy closes mid-echo
      s.pipe(s);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const proxy = await frameProxy({ listen: { port: 0 }, upstream: { port } });
    const client = connect(proxy.address);
    const { createFrameReader, encodeFrame } = await import('../../src/index.js');
    const replies = createFrameReader(client);
    client.write(encodeFrame('ping'));
    await replies.waitForFrames(1);
    expect(proxy).toHaveForwarded('c2s', 1);
    expect(() => expect(proxy).toHaveForwarded('s2c', 2)).toThrow(
      'expected the proxy to have forwarded 2 s2c frames, got 1',
    );
    client.destroy();
    server.close();
  });

  test('VT-01 a mock option that cannot be strict (onExhausted, spy, cassette) leaves strict off', async ({
    mockBinary,
  }) => {
    const git = mockBinary('git', { onExhausted: 'repeat', responses: [{ stdout: 'x\n' }] });
    made.push(git.dir);
    await runCommand('git', [], { env: git.env() });
    const second = await runCommand('git', [], { env: git.env() });
    expect(second.stdout.toString()).toBe('x\n'); // repeated: not strict
  });
});

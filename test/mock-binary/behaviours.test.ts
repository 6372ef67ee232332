// Process behaviours (MB-14): signal, hang, chunks, stdin per response,
// exitAfterStdinEof — through real shims, seen by real callers.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMockBinary, InvalidResponseError, MockExitCode } from '../../src/index.js';
import { completion, intoClosedPipe, runCommand, spawnTracked, testDir } from '../helpers/index.js';

describe('process behaviours', () => {
  it('MB-14 signal: the caller sees the fake end by that signal, after its output; the record says so', async () => {
    await using git = createMockBinary('git', {
      responses: [
        { stdout: 'partial\n', signal: 'SIGTERM' },
        { signal: 'SIGKILL' },
        { signal: 'SIGSEGV' },
      ],
    });
    for (const signal of ['SIGTERM', 'SIGKILL', 'SIGSEGV']) {
      const r = await runCommand('git', ['gc'], { env: git.env() });
      expect(r).toMatchObject({ code: null, signal });
    }
    expect((await runCommand('git', [], { env: git.env() })).stdout.toString()).toBe(''); // repeats SIGSEGV
    const first = git.nthCall(1);
    expect(first).toMatchObject({ status: 'exited', signal: 'SIGTERM', exitCode: undefined });
    const sh = await runCommand('sh', ['-c', 'git fetch; echo "status $?"'], { env: git.env() });
    expect(sh.stdout.toString()).toBe('status 139\n'); // 128 + SIGSEGV, as for a real crash
    expect(git.callCount()).toBe(5);
  });

  it('MB-14 chunks: a reader sees the pieces arrive apart, stdout and stderr in order', async () => {
    await using git = createMockBinary('git', {
      responses: [
        {
          stdout: 'Cloning into "x"...\n',
          chunks: [
            { stderr: 'Receiving objects: 50%\n', delayMs: 300 },
            { stderr: 'Receiving objects: 100%\n', delayMs: 300 },
            { stdout: 'done\n', delayMs: 300 },
          ],
        },
      ],
    });
    const child = spawnTracked('git', ['clone', 'x'], { env: git.env() });
    const seen: Array<{ at: number; text: string }> = [];
    const started = performance.now();
    const note = (chunk: Buffer) =>
      seen.push({ at: performance.now() - started, text: chunk.toString() });
    child.stdout?.on('data', note);
    child.stderr?.on('data', note);
    const exit = await completion(child);
    expect(exit.code).toBe(0);
    expect(seen.map((s) => s.text).join('')).toBe(
      'Cloning into "x"...\nReceiving objects: 50%\nReceiving objects: 100%\ndone\n',
    );
    // Each piece came in its own read, well after the one before (300 ms
    // apart; a stall of the test process shortens a gap it measures).
    expect(seen).toHaveLength(4);
    for (let i = 1; i < seen.length; i++) {
      expect((seen[i]?.at ?? 0) - (seen[i - 1]?.at ?? 0)).toBeGreaterThan(150);
    }
  });

  it('MB-14 hang: the call runs until killed, and a hung call ends at the mock timeout with a diagnostic', async () => {
    await using git = createMockBinary('git', {
      timeoutMs: 1500,
      responses: [{ stdout: 'listening\n', hang: true }],
    });
    const child = spawnTracked('git', ['daemon'], { env: git.env() });
    const ready = new Promise<void>((resolve) => child.stdout?.once('data', () => resolve()));
    const done = completion(child);
    await ready;
    await git.waitForCalls(1, { until: 'started' });
    child.kill('SIGTERM');
    expect(await done).toMatchObject({ code: null, signal: 'SIGTERM' });
    await git.waitForCalls(1); // recorded as killed
    expect(git.lastCall()?.status).toBe('killed');

    const timedOut = await runCommand('git', ['daemon'], { env: git.env() });
    expect(timedOut.code).toBe(MockExitCode.timeout);
    expect(timedOut.stdout.toString()).toBe('listening\n');
    expect(timedOut.stderr.toString()).toBe(
      'shimkit: mock "git" call #2 timed out after 1500 ms hanging, as scripted (hang: true); kill it, or raise the mock\'s timeoutMs.\n',
    );
  });

  it("MB-14 stdin per response: 'capture' on one response of a mock that ignores stdin, 'ignore' on one of a mock that captures", async () => {
    await using git = createMockBinary('git', {
      responses: [{ stdin: 'capture', stdout: 'applied\n' }, { stdout: 'not read\n' }],
    });
    await runCommand('git', ['apply'], { env: git.env(), input: 'diff --git a b\n' });
    await runCommand('git', ['apply'], { env: git.env(), input: 'second\n' });
    expect(git.calls().map((c) => c.stdin)).toEqual(['diff --git a b\n', undefined]);

    await using kubectl = createMockBinary('kubectl', {
      stdin: 'capture',
      responses: [{ stdin: 'ignore' }, {}],
    });
    await runCommand('kubectl', [], { env: kubectl.env(), input: 'one\n' });
    await runCommand('kubectl', [], { env: kubectl.env(), input: 'two\n' });
    expect(kubectl.calls().map((c) => c.stdin)).toEqual([undefined, 'two\n']);
  });

  it('MB-14 exitAfterStdinEof: the call prints, then stays until its caller closes stdin, then exits with its code', async () => {
    await using server = createMockBinary('my-lsp', {
      responses: [{ stdout: 'ready\n', exitAfterStdinEof: true, exitCode: 3, stdin: 'capture' }],
      stdinIdleMs: 0,
    });
    const child = spawn('my-lsp', ['--stdio'], {
      env: server.env(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const done = completion(child);
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    child.stdin.write('{"jsonrpc":"2.0"}\n');
    expect(child.exitCode).toBeNull(); // its output is done, and it is still there
    child.stdin.end('bye\n');
    expect(await done).toMatchObject({ code: 3 });
    expect(server.lastCall()?.stdin).toBe('{"jsonrpc":"2.0"}\nbye\n');
  });

  it('MB-14 MB-06 output into a pipe whose reader has gone ends the call by SIGPIPE, as a real command ends: a pipefail script sees 141, the record says SIGPIPE', async () => {
    await using git = createMockBinary('git', {
      responses: [
        { stdout: 'small\n', exitCode: 3 }, // static: the sh shim's, where it serves calls
        { stdout: 'x'.repeat(200_000), exitCode: 3 }, // more than a pipe holds: the runner's
        { chunks: [{ stdout: 'streamed\n' }], exitCode: 3 }, // the runner's
        { stdout: 'out\n', stderr: 'err\n', exitCode: 3 }, // stderr the closed one
      ],
    });
    const flag = join(testDir(), 'reader-closed');
    const script = [
      'set -o pipefail',
      intoClosedPipe('git log', flag),
      'echo "small $?"',
      'git log | true', // the reader exits while a write that does not fit waits for it
      'echo "large $?"',
      intoClosedPipe('git log', flag),
      'echo "chunks $?"',
      intoClosedPipe('git log 2>&1 >/dev/null', flag),
      'echo "stderr $?"',
    ].join('\n');
    const r = await runCommand('bash', ['-c', script], { env: git.env() });
    expect([r.stdout.toString(), r.stderr.toString()]).toEqual([
      'small 141\nlarge 141\nchunks 141\nstderr 141\n',
      '',
    ]);
    expect(git.calls().map((c) => [c.status, c.signal, c.exitCode])).toEqual(
      Array(4).fill(['exited', 'SIGPIPE', undefined]),
    );
    // Called by Node: ended by the signal, not an exit code.
    git.enqueue({ stdout: 'x'.repeat(200_000) });
    const child = spawnTracked('git', ['log'], {
      env: git.env(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const ended = completion(child);
    child.stdout?.destroy();
    expect(await ended).toMatchObject({ code: null, signal: 'SIGPIPE' });
  });

  it('MB-14 behaviour fields are validated where they are written', async () => {
    await using git = createMockBinary('git');
    const bad = (response: object) => () => git.enqueue(response);
    expect(bad({ signal: 'SIGUSR1' })).toThrow(InvalidResponseError);
    expect(bad({ signal: 'SIGUSR1' })).toThrow('to be one of SIGTERM, SIGINT, SIGKILL');
    expect(bad({ hang: 'yes' })).toThrow('`hang` field');
    expect(bad({ hang: true, signal: 'SIGTERM' })).toThrow('sets both `hang` and `signal`');
    expect(bad({ chunks: [{ stdout: 1 }] })).toThrow('chunk 0: stdout must be a string');
    expect(bad({ chunks: [{ delayMs: 5 }] })).toThrow('chunk 0 has neither');
    expect(bad({ chunks: [{ out: 'x' }] })).toThrow('chunk 0 has an unknown key "out"');
    expect(bad({ chunks: [{ stdout: 'x', delayMs: -1 }] })).toThrow('chunk 0: delayMs must be');
    expect(bad({ stdin: 'pipe' })).toThrow("to be 'capture' or 'ignore'");
    expect(bad({ exitAfterStdinEof: 1 })).toThrow('`exitAfterStdinEof` field');
    expect(git.queuedCount()).toBe(0);
  });
});

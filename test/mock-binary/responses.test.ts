import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { createMockBinary, MockExitCode } from '../../src/index.js';
import { completion, runCommand, spawnTracked, testDir } from '../helpers/index.js';
import { generationDir, processState, stopCallsAt, waitUntilStopped } from '../helpers/protocol.js';

describe('response fields', () => {
  it('MB-03 writes stdout, stderr and the exit code as scripted', async () => {
    await using git = createMockBinary('git', {
      responses: [{ stdout: 'out ✓\n', stderr: 'err ✗\n', exitCode: 7 }],
    });
    const r = await runCommand(git.path);
    expect(r.stdout.toString()).toBe('out ✓\n');
    expect(r.stderr.toString()).toBe('err ✗\n');
    expect(r.code).toBe(7);
  });

  it('MB-03 returns every exit code 0–255 as scripted, none reserved', async () => {
    const codes = Array.from({ length: 256 }, (_, i) => i);
    await using tool = createMockBinary('tool', {
      responses: codes.map((exitCode) => ({ exitCode })),
    });
    // One shell makes the 256 calls in turn: 256 spawns from the test process cost far more.
    const r = await runCommand('sh', [
      '-c',
      'for _ in $(seq 256); do "$0"; echo $?; done',
      tool.path,
    ]);
    expect(r.stderr.toString()).toBe('');
    const seen = r.stdout.toString().trim().split('\n').map(Number);
    expect(seen).toEqual(codes); // FIFO: in the order they were queued
    const byCall = tool.calls().map((c) => [c.response, c.exitCode]);
    expect(byCall).toHaveLength(256);
    for (const [response, exitCode] of byCall) expect(exitCode).toBe((response as number) - 1);
  });

  it('MB-03 writes binary output from stdoutBase64 / stderrBase64 byte for byte', async () => {
    const bytes = Buffer.from([0, 1, 2, 0xff, 0xfe, 0x80, 10, 13, 0]);
    await using tool = createMockBinary('tool', {
      responses: [
        {
          stdoutBase64: bytes.toString('base64'),
          stderrBase64: Buffer.from([0xc3, 0x28]).toString('base64'),
        },
      ],
    });
    const r = await runCommand(tool.path);
    expect(r.stdout.equals(bytes)).toBe(true);
    expect(r.stderr.equals(Buffer.from([0xc3, 0x28]))).toBe(true);
  });

  it('MB-03 writes jsonl values as one JSON line each, after stdout', async () => {
    await using pi = createMockBinary('pi', {
      responses: [
        { stdout: 'start\n', jsonl: [{ type: 'message_end', text: 'a\nb' }, [1, 2], 'x', null] },
      ],
    });
    const r = await runCommand(pi.path, ['--mode', 'json']);
    expect(r.stdout.toString()).toBe(
      'start\n{"type":"message_end","text":"a\\nb"}\n[1,2]\n"x"\nnull\n',
    );
  });

  it('MB-03 writes files relative to the call cwd, creating parents, before any output', async () => {
    const cwd = testDir();
    const abs = join(testDir(), 'deep', 'abs.txt');
    await using tool = createMockBinary('tool', {
      responses: [
        {
          writeFiles: { 'out/nested/result.md': '# Done\n', [abs]: 'absolute' },
          stdout: 'wrote\n',
        },
      ],
    });
    const r = await runCommand(tool.path, [], { cwd });
    expect(r.stdout.toString()).toBe('wrote\n');
    expect(readFileSync(join(cwd, 'out/nested/result.md'), 'utf8')).toBe('# Done\n');
    expect(readFileSync(abs, 'utf8')).toBe('absolute');
  });

  it('MB-03 waits delayMs before answering', async () => {
    await using tool = createMockBinary('tool', {
      responses: [{ delayMs: 300, stdout: 'late\n' }],
    });
    const r = await runCommand(tool.path);
    expect(r.stdout.toString()).toBe('late\n');
    const [call] = tool.calls();
    // A call the sh shim served has its times from the file system's coarser
    // clock, which may read up to a tick short (test/mock-binary/record.test.ts).
    const fsClock = process.env.SHIMKIT_FAST_PATH === '0' ? 0 : 10;
    expect((call?.endedAt ?? 0) - (call?.startedAt ?? 0)).toBeGreaterThanOrEqual(300 - fsClock);
  });

  it('MB-03 delivers 10 MB on stdout through a pipe whole', async () => {
    const big = Buffer.alloc(10 * 1024 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7 + (i >> 13)) & 0xff;
    await using tool = createMockBinary('tool', {
      responses: [{ stdoutBase64: big.toString('base64') }],
    });
    const r = await runCommand(tool.path);
    expect(r.code).toBe(0);
    expect(r.stdout.length).toBe(big.length);
    expect(createHash('sha256').update(r.stdout).digest('hex')).toBe(
      createHash('sha256').update(big).digest('hex'),
    );
  });

  it('MB-03 delivers 10 MB whole to a slow reader that pauses the pipe', async () => {
    const big = 'x'.repeat(10 * 1024 * 1024);
    await using tool = createMockBinary('tool', { responses: [{ stdout: big }] });
    const child = spawnTracked(tool.path, []);
    child.stdout?.pause();
    const done = completion(child);
    // Resume only once the call has its response and sleeps: blocked writing into the full pipe.
    await vi.waitFor(
      () => {
        expect(tool.calls()[0]?.responseSource).toBe('queue');
        expect(processState(child.pid ?? -1)).toBe('S');
      },
      { timeout: 10_000, interval: 10 },
    );
    child.stdout?.resume();
    const r = await done;
    expect(r.stdout.length).toBe(big.length);
  });
});

describe('large responses, kept in out files', () => {
  it('MB-03 MB-20 big base64, JSON lines, stderr and files come out byte-identical to small ones', async () => {
    const cwd = testDir();
    const bytes = Buffer.from(Array.from({ length: 200_000 }, (_, i) => (i * 7919) % 256));
    const rows = Array.from({ length: 5000 }, (_, i) => ({ i, name: `row ${i} ✓` }));
    const file = 'ü'.repeat(100_000);
    await using tool = createMockBinary('tool', {
      responses: [
        { stdoutBase64: bytes.toString('base64'), stderr: 'e'.repeat(40_000), exitCode: 3 },
        { stdout: 'head\n', jsonl: rows },
        { writeFiles: { 'sub/big.txt': file, 'small.txt': 's' } },
      ],
    });
    const queue = readFileSync(join(generationDir(tool), 'queue.jsonl'), 'utf8');
    expect(queue.length).toBeLessThan(2000);
    expect(queue).toMatch(/"stdoutFile":.*"stderrFile":/);
    expect(queue).toContain('"writeFilesFile":');

    const a = await runCommand(tool.path, [], { cwd });
    expect(a.code).toBe(3);
    expect(a.stdout.equals(bytes)).toBe(true);
    expect(a.stderr.toString()).toBe('e'.repeat(40_000));
    const b = await runCommand(tool.path, [], { cwd });
    expect(b.stdout.toString()).toBe(`head\n${rows.map((r) => `${JSON.stringify(r)}\n`).join('')}`);
    const c = await runCommand(tool.path, [], { cwd });
    expect([c.code, c.stderr.toString()]).toEqual([0, '']);
    expect(readFileSync(join(cwd, 'sub/big.txt'), 'utf8')).toBe(file);
    expect(readFileSync(join(cwd, 'small.txt'), 'utf8')).toBe('s');
    tool.assertDone();
  });
});

describe('queue order and exhaustion', () => {
  it('MB-05 claims responses FIFO, then repeats the last by default', async () => {
    await using git = createMockBinary('git', { responses: [{ stdout: '1' }, { stdout: '2' }] });
    const outs: string[] = [];
    for (let i = 0; i < 4; i++) outs.push((await runCommand(git.path)).stdout.toString());
    expect(outs).toEqual(['1', '2', '2', '2']);
    expect(git.calls().map((c) => [c.responseSource, c.response])).toEqual([
      ['queue', 1],
      ['queue', 2],
      ['repeat', 2],
      ['repeat', 2],
    ]);
  });

  it('MB-05 onExhausted "fail" exits with a distinct diagnostic and marks the call unmatched', async () => {
    await using git = createMockBinary('git', {
      onExhausted: 'fail',
      responses: [{ stdout: 'one\n' }],
    });
    expect((await runCommand(git.path, ['fetch'])).stdout.toString()).toBe('one\n');
    const r = await runCommand(git.path, ['push', '--force']);
    expect(r.code).toBe(MockExitCode.unmatched);
    expect(r.stdout.toString()).toBe('');
    expect(r.stderr.toString()).toBe(
      'shimkit: mock "git" call #2 (git push --force) has no response: the only queued response is used and onExhausted is "fail". Enqueue another response or set onExhausted.\n',
    );
    const last = git.lastCall();
    expect(last?.status).toBe('unmatched');
    expect(last?.responseSource).toBe('none');
    expect(() => git.assertDone()).toThrow(/1 call had no response \(#2\)/);
  });

  it('MB-05 an onExhausted response object is the fallback', async () => {
    await using git = createMockBinary('git', {
      onExhausted: { stderr: 'no more\n', exitCode: 9 },
      responses: [{ stdout: 'first' }],
    });
    await runCommand(git.path);
    const r = await runCommand(git.path);
    expect([r.code, r.stderr.toString()]).toEqual([9, 'no more\n']);
    expect(git.lastCall()?.responseSource).toBe('fallback');
  });

  it('MB-05 with nothing ever queued a call exits 0 silently, or uses options.default', async () => {
    await using quiet = createMockBinary('quiet');
    const r = await runCommand(quiet.path, ['anything']);
    expect([r.code, r.stdout.length, r.stderr.length]).toEqual([0, 0, 0]);
    expect(quiet.lastCall()?.responseSource).toBe('default');

    await using chatty = createMockBinary('chatty', { default: { stdout: 'v1.0\n', exitCode: 2 } });
    const d = await runCommand(chatty.path, ['--version']);
    expect([d.code, d.stdout.toString()]).toEqual([2, 'v1.0\n']);
  });

  it('MB-05 responses enqueued after exhaustion are claimed next, in order', async () => {
    await using git = createMockBinary('git', { responses: [{ stdout: 'a' }] });
    await runCommand(git.path);
    await runCommand(git.path); // repeat of a
    git.enqueue([{ stdout: 'b' }, { stdout: 'c' }]);
    expect((await runCommand(git.path)).stdout.toString()).toBe('b');
    expect((await runCommand(git.path)).stdout.toString()).toBe('c');
    expect(git.calls().map((c) => c.response)).toEqual([1, 1, 2, 3]);
    git.assertDone();
  });
});

describe('reset', () => {
  it('MB-02 reset() while a call is in flight: the call cannot consume or record into the new queue', async () => {
    await using git = createMockBinary('git', { responses: [{ delayMs: 400, stdout: 'old\n' }] });
    stopCallsAt(git, 'decided'); // in flight for sure: it has claimed, and waits for the test
    const child = spawnTracked(git.path, ['old-call']);
    const inFlight = completion(child);
    await waitUntilStopped(child.pid);
    stopCallsAt(git, undefined);
    git.reset();
    git.enqueue({ stdout: 'new\n' });
    child.kill('SIGCONT');
    const old = await inFlight;
    expect(old.stdout.toString()).toBe('old\n'); // it finishes as it was scripted…
    expect(git.callCount()).toBe(0); // …but leaves no trace in the new generation
    expect(git.queuedCount()).toBe(1);
    const fresh = await runCommand(git.path, ['new-call']);
    expect(fresh.stdout.toString()).toBe('new\n');
    expect(git.calls().map((c) => [c.index, c.argv, c.response])).toEqual([[1, ['new-call'], 1]]);
    git.assertDone();
  });

  it.each(['started', 'recorded'] as const)(
    'MB-02 MB-18 reset() while a call is stopped at step "%s", before its claim: it fails loudly instead of claiming from the new queue',
    async (step) => {
      await using git = createMockBinary('git', { responses: [{ stdout: 'old' }] });
      const gen = generationDir(git);
      stopCallsAt(git, step);
      const child = spawnTracked(git.path, ['stale']);
      const waiting = completion(child);
      await waitUntilStopped(child.pid);
      git.reset();
      stopCallsAt(git, undefined);
      git.enqueue({ stdout: 'new' });
      child.kill('SIGCONT');
      const r = await waiting;
      expect(r.code).toBe(MockExitCode.broken);
      expect(r.stdout.toString()).toBe('');
      expect(r.stderr.toString()).toMatch(
        /^shimkit: a state file is missing \(was the mock disposed or reset while this call ran\?\): \/.*\n$/,
      );
      expect(git.callCount()).toBe(0);
      expect(existsSync(gen)).toBe(false);
      expect((await runCommand(git.path)).stdout.toString()).toBe('new');
      git.assertDone();
    },
  );
});

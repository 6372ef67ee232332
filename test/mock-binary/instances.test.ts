import { existsSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { createMockBinary, createMockBinDir } from '../../src/index.js';
import { completion, python3, runCommand, spawnTracked, testDir } from '../helpers/index.js';
import { generationDir, processState, stopCallsAt, waitUntilStopped } from '../helpers/protocol.js';

describe('calls that died', () => {
  it('MB-06 a call killed mid-way shows as killed even while its unreaped process is a zombie', async () => {
    await using git = createMockBinary('git', { responses: [{ stdout: 'x' }] });
    stopCallsAt(git, 'claimed');
    // A parent that starts the call, kills it once it has stopped, and never reaps it.
    const parent = spawnTracked(python3(), [
      '-c',
      `import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1], "doomed"])
os.waitpid(pid, os.WUNTRACED)
os.kill(pid, 9)
print(pid, flush=True)
sys.stdin.read()  # stay alive, holding the zombie, until the test ends`,
      git.path,
    ]);
    const pid = await new Promise<number>((resolve) =>
      parent.stdout?.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))),
    );
    await vi.waitFor(() => expect(processState(pid)).toBe('Z'), { timeout: 10_000, interval: 5 });
    expect(git.calls().map((c) => [c.argv, c.status, c.response])).toEqual([
      [['doomed'], 'killed', 1],
    ]);
  });
});

describe('instances never mix', () => {
  it('MB-18 a call still running from a disposed mock cannot write into a new mock of the same name', async () => {
    await using bin = createMockBinDir({ tmpDir: testDir() });
    // Through the runner: it holds the response once its claim is recorded. The sh
    // fast path records the claim before it reads the response's fragment, so a
    // dispose in between makes the stale call a state-missing handover (it still
    // never writes into the new mock, but prints nothing): a race, not this test.
    const old = bin.mock('git', {
      responses: [{ delayMs: 1500, stdout: 'old\n' }],
      fastPath: false,
    });
    const slow = runCommand('git', ['old-call'], { env: bin.env() });
    // In flight for sure: it has claimed its response (and sits out the delay).
    await vi.waitFor(() => expect(old.calls()[0]?.responseSource).toBe('queue'), {
      timeout: 10_000,
      interval: 10,
    });
    const oldState = old.stateDir;
    await old.dispose();

    const git = bin.mock('git', { responses: [{ stdout: 'new\n' }, { stdout: 'later\n' }] });
    expect(git.stateDir).not.toBe(oldState);
    const first = await runCommand('git', ['new-call'], { env: bin.env() });
    expect(first.stdout.toString()).toBe('new\n');
    const stale = await slow; // finishes after the new mock's first call
    expect(stale.stdout.toString()).toBe('old\n');

    expect(git.calls().map((c) => [c.index, c.argv, c.status, c.response])).toEqual([
      [1, ['new-call'], 'exited', 1],
    ]);
    expect(() => git.assertDone()).toThrow(/1 of 2 responses used; never used: #2/);
    expect(existsSync(oldState)).toBe(false);
  });

  it('MB-18 reset() across a dispose: generations of a new mock never meet a stale call', async () => {
    await using bin = createMockBinDir({ tmpDir: testDir() });
    const first = bin.mock('tool', { responses: [{ stdout: 'a' }] });
    first.reset(); // g2 of the first instance
    first.enqueue({ stdout: 'b' });
    stopCallsAt(first, 'recorded');
    const child = spawnTracked('tool', ['stale'], { env: bin.env() });
    const exited = completion(child);
    await waitUntilStopped(child.pid);
    await first.dispose();

    const second = bin.mock('tool', { responses: [{ stdout: 'c' }] });
    second.reset(); // g2 again, but of another instance
    second.enqueue({ stdout: 'd' });
    child.kill('SIGCONT');
    const r = await exited;
    expect(r.code).toBe(122); // its state is gone: a diagnostic, not a claim in the new mock
    expect(r.stderr.toString()).toMatch(/disposed or reset while this call ran/);
    expect((await runCommand('tool', [], { env: bin.env() })).stdout.toString()).toBe('d');
    expect(second.calls().map((c) => c.argv)).toEqual([[]]);
    second.assertDone();
  });

  it('MB-18 every instance and generation dir is new, even for the same name in the same dir', async () => {
    await using bin = createMockBinDir({ tmpDir: testDir() });
    const seen = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const git = bin.mock('git');
      for (let g = 0; g < 3; g++) {
        const gen = generationDir(git);
        expect(seen.has(gen), gen).toBe(false);
        seen.add(gen);
        git.reset();
      }
      await git.dispose();
    }
    expect(seen.size).toBe(15);
  });

  it('MB-18 a stale call of a createMockBinary mock that was disposed leaves no record anywhere', async () => {
    const git = createMockBinary('git', { responses: [{ stdout: 'x' }], tmpDir: testDir() });
    stopCallsAt(git, 'decided');
    const child = spawnTracked(git.path, ['late']);
    const exited = completion(child);
    await waitUntilStopped(child.pid);
    const root = git.dir.replace(/\/bin$/, '');
    await git.dispose();
    expect(existsSync(root)).toBe(false);
    child.kill('SIGCONT');
    const r = await exited;
    expect([r.code, r.stdout.toString()]).toEqual([0, 'x']); // it finishes as scripted
    expect(existsSync(root)).toBe(false); // …and recreates nothing
  });
});

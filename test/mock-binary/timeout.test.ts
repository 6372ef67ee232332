import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { createMockBinary, MockExitCode } from '../../src/index.js';
import { completion, runCommand, spawnTracked } from '../helpers/index.js';
import { stopCallsAt, waitUntilStopped } from '../helpers/protocol.js';

describe('the shim never hangs forever', () => {
  it('MB-11 delayMs beyond timeoutMs ends the call with a distinct diagnostic, not the scripted code', async () => {
    await using tool = createMockBinary('tool', {
      timeoutMs: 300,
      responses: [{ delayMs: 60_000, exitCode: 0, stdout: 'never' }],
    });
    const r = await runCommand(tool.path, ['slow']);
    expect(r.code).toBe(MockExitCode.timeout);
    expect(r.stdout.toString()).toBe('');
    expect(r.stderr.toString()).toBe(
      `shimkit: mock "tool" call #1 timed out after 300 ms (scripted delayMs: 60000); raise the mock's timeoutMs or shorten the delay.\n`,
    );
    expect(tool.lastCall()).toMatchObject({ status: 'timed-out', exitCode: 124, response: 1 });
    expect(tool.lastCall()?.diagnostic).toMatch(/^mock "tool" call #1 timed out after 300 ms/);
  });

  it('MB-11 a scripted exit code 124 stays a normal exit, told apart from a timeout', async () => {
    await using tool = createMockBinary('tool', {
      timeoutMs: 5000,
      responses: [{ exitCode: 124, delayMs: 10 }],
    });
    const r = await runCommand(tool.path);
    expect([r.code, r.stderr.toString()]).toEqual([124, '']);
    expect(tool.lastCall()).toMatchObject({
      status: 'exited',
      exitCode: 124,
      diagnostic: undefined,
    });
  });

  it('MB-11 MB-19 a call held up past timeoutMs before it could answer ends in the timeout diagnostic, never serves', async () => {
    await using tool = createMockBinary('tool', {
      timeoutMs: 300,
      responses: [{ stdout: 'late', exitCode: 0 }],
    });
    // Stopped after it claimed: the machine "did not run it" until its deadline passed.
    stopCallsAt(tool, 'decided');
    const child = spawnTracked(tool.path, ['late']);
    const done = completion(child);
    await waitUntilStopped(child.pid);
    const started = tool.lastCall()?.startedAt ?? 0;
    await vi.waitFor(
      () => {
        if (Date.now() <= started + 300) throw new Error('deadline not passed yet');
      },
      { timeout: 5000, interval: 20 },
    );
    child.kill('SIGCONT');
    const r = await done;
    expect(r.code).toBe(MockExitCode.timeout);
    expect(r.stdout.toString()).toBe('');
    expect(r.stderr.toString()).toBe(
      `shimkit: mock "tool" call #1 timed out after 300 ms before it could answer (a busy machine started it late); raise the mock's timeoutMs.\n`,
    );
    expect(tool.lastCall()).toMatchObject({ status: 'timed-out', exitCode: 124, response: 1 });
  });

  it('MB-11 MB-20 delayMs beyond what a timer can hold ends in the timeout diagnostic, never served at once', async () => {
    await using tool = createMockBinary('tool', {
      timeoutMs: 300,
      responses: [{ delayMs: 2 ** 31, stdout: 'never' }, { delayMs: Number.MAX_SAFE_INTEGER }],
    });
    for (const delay of [2 ** 31, Number.MAX_SAFE_INTEGER]) {
      const r = await runCommand(tool.path);
      expect(r.code).toBe(MockExitCode.timeout);
      expect(r.stdout.toString()).toBe('');
      expect(r.stderr.toString()).toMatch(
        new RegExp(
          `^shimkit: mock "tool" call #\\d timed out after 300 ms \\(scripted delayMs: ${delay}\\); raise`,
        ),
      );
      expect(r.stderr.toString()).not.toMatch(/TimeoutOverflowWarning/);
    }
  });

  it('MB-11 the default timeout is 30 s and a delay inside it completes', async () => {
    await using tool = createMockBinary('tool', {
      responses: [{ delayMs: 100, stdout: 'in time' }],
    });
    const state = JSON.parse(readFileSync(join(tool.stateDir, 'state.json'), 'utf8'));
    expect(state.config.timeoutMs).toBe(30_000);
    const r = await runCommand(tool.path);
    expect([r.code, r.stdout.toString()]).toEqual([0, 'in time']);
  });
});

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMockBinary, MockExitCode } from '../../src/index.js';
import { runCommand } from '../helpers/index.js';
import { generationDir } from '../helpers/parallel.js';

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

  it('MB-11 a call stuck behind a lock held by a live process gives up after timeoutMs with a diagnostic', async () => {
    await using tool = createMockBinary('tool', { timeoutMs: 400 });
    const lock = join(generationDir(tool), 'lock');
    writeFileSync(lock, `${process.pid}\n`); // held by this (live) test process
    const r = await runCommand(tool.path);
    expect(r.code).toBe(MockExitCode.timeout);
    expect(r.stderr.toString()).toMatch(
      new RegExp(
        `^shimkit: gave up waiting for the queue lock after \\d+ ms; it is held by live pid ${process.pid}: ${lock}; raise the mock's timeoutMs if this is expected\\n$`,
      ),
    );
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

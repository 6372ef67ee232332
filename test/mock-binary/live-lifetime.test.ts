// Holds and live calls never outlive their mock (MB-16, MB-18): one hold
// takes one call however busy the test process is, and a call waiting for
// the test process ends at once when its mock, or the test process, is gone.

import type { ChildProcess } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createMockBinary, DisposedError, MockExitCode, run } from '../../src/index.js';
import { liveDir } from '../../src/queue/live.js';
import { liveGeneration } from '../../src/queue/reader.js';
import { completion, spawnTracked } from '../helpers/index.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/hold-then-die.mjs', import.meta.url));
const VANISHED = 'a state file is missing (was the mock disposed or reset while this call ran?)';

/** Block this process's event loop until `ready()` holds (a test process busy with other work). */
function busyUntil(ready: () => boolean, deadlineMs = 20_000): void {
  const until = Date.now() + deadlineMs;
  while (!ready()) {
    if (Date.now() > until) throw new Error('the calls never asked the test process');
  }
}

/** The JSON lines a child prints, one promise per line as they come. */
function jsonLines(child: ChildProcess): () => Promise<Record<string, unknown>> {
  const lines: string[] = [];
  const waiters: Array<(line: string) => void> = [];
  let text = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n')) {
      const line = text.slice(0, at);
      text = text.slice(at + 1);
      const waiter = waiters.shift();
      if (waiter) waiter(line);
      else lines.push(line);
    }
  });
  return () =>
    new Promise((resolve, reject) => {
      const line = lines.shift();
      if (line !== undefined) return resolve(JSON.parse(line));
      waiters.push((l) => resolve(JSON.parse(l)));
      child.once('close', () => reject(new Error(`the fixture exited first: ${text}`)));
    });
}

describe('holds and live calls end with their mock', () => {
  it("MB-16 a hold takes exactly one call, however long the test process's event loop is busy", async () => {
    await using git = createMockBinary('git', {
      responses: [{ stdout: 'queued\n', times: 'always' }],
    });
    const first = git.hold();
    const second = git.hold();
    const env = git.env();
    const asked = liveDir(liveGeneration(git.stateDir));
    const calls = [1, 2, 3].map((n) => run('git', ['push', String(n)], { env, timeoutMs: 30_000 }));
    // All three ask before the test process can look at any of them.
    busyUntil(() => {
      try {
        return readdirSync(asked).filter((f) => f.endsWith('.call')).length === 3;
      } catch {
        return false;
      }
    });
    const a = await first.waitReceived({ timeoutMs: 10_000 });
    const b = await second.waitReceived({ timeoutMs: 10_000 });
    const [na, nb] = [Number(a.argv[1]), Number(b.argv[1])];
    expect(na).not.toBe(nb);
    // The third call fits no hold that is still waiting: it goes on by itself.
    const free = [1, 2, 3].find((n) => n !== na && n !== nb) as number;
    const callOf = (n: number) => calls[n - 1] as (typeof calls)[number];
    const third = await callOf(free);
    expect({ stdout: third.stdout, stderr: third.stderr }).toEqual({
      stdout: 'queued\n',
      stderr: '',
    });
    first.release({ stdout: 'first\n' });
    expect((await callOf(na)).stdout).toBe('first\n');
    second.release({ stdout: 'second\n' });
    expect((await callOf(nb)).stdout).toBe('second\n');
    expect(git.callCount()).toBe(3);
  });

  it.each([
    ['dispose()', 'hold'],
    ['reset()', 'hold'],
    ['dispose()', 'handler'],
    ['reset()', 'handler'],
  ] as const)(
    'MB-18 a call waiting on a %s-ended mock (%s) ends at once with the state-missing diagnostic',
    async (end, how) => {
      await using git = createMockBinary('git', { timeoutMs: 60_000 });
      let received: Promise<unknown>;
      const hold = how === 'hold' ? git.hold() : undefined;
      if (hold) received = hold.waitReceived({ timeoutMs: 10_000 });
      else
        received = new Promise((resolve) =>
          git.handle((call) => {
            resolve(call);
            return new Promise(() => {}); // never answers
          }),
        );
      const call = run('git', ['fetch'], { env: git.env(), timeoutMs: 30_000 });
      await received;
      if (end === 'reset()') git.reset();
      else await git.dispose();
      const r = await call;
      expect(r.timedOut).toBe(false);
      expect(r.exitCode).toBe(MockExitCode.broken);
      expect(r.stderr).toContain(VANISHED);
      if (hold) {
        expect(() => hold.release()).toThrow(DisposedError);
        expect(() => hold.release()).toThrow(`The hold() on mock "git", ended by ${end}`);
      }
    },
  );

  it('MB-18 release() after reset() throws, and a waitReceived() pending then rejects', async () => {
    await using git = createMockBinary('git');
    const hold = git.hold({ args: ['never'] });
    const pending = hold.waitReceived({ timeoutMs: 30_000 });
    git.reset();
    await expect(pending).rejects.toThrow(DisposedError);
    expect(() => hold.release({ stdout: 'late\n' })).toThrow(
      'The hold() on mock "git", ended by reset(), was already disposed; create a new one for this test.',
    );
    await expect(hold.waitReceived()).rejects.toThrow(DisposedError);
    // A hold made after the reset works on the new generation.
    const fresh = git.hold();
    const call = run('git', ['x'], { env: git.env(), timeoutMs: 30_000 });
    await fresh.waitReceived({ timeoutMs: 10_000 });
    fresh.release({ stdout: 'fresh\n' });
    expect((await call).stdout).toBe('fresh\n');
  });

  it.each([
    ['SIGTERM', 'hold'],
    ['SIGINT', 'hold'],
    ['throw', 'hold'],
    ['exit', 'handler'],
    ['SIGKILL', 'hold'],
    ['SIGKILL', 'handler'],
  ] as const)(
    'MB-18 a call held by a test process that dies (%s, %s) ends at once, saying why',
    async (death, how) => {
      const signal = death.startsWith('SIG') ? (death as NodeJS.Signals) : undefined;
      const child = spawnTracked(process.execPath, [FIXTURE, signal ? 'wait' : death, how]);
      const exited = completion(child);
      const next = jsonLines(child);
      const { path } = (await next()) as { path: string };
      // A SIGKILLed process cleans nothing up: the test does.
      onTestFinished(() =>
        rmSync(dirname(path.split(':')[0] as string), { recursive: true, force: true }),
      );
      const call = run('git', ['fetch'], {
        env: { ...process.env, PATH: path },
        timeoutMs: 30_000,
      });
      expect((await next()).received).toEqual(['fetch']);
      if (signal) child.kill(signal);
      await exited;
      const r = await call;
      expect(r.timedOut).toBe(false);
      expect(r.exitCode).toBe(MockExitCode.broken);
      expect(r.stderr).toContain(
        signal === 'SIGKILL'
          ? `the test process that was to answer it (pid ${child.pid}) is gone, so no hold() or handle() can`
          : VANISHED,
      );
    },
  );
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { completion, runCommand, spawnTracked, testDir } from '../helpers/index.js';
import { CLI, queueLines, shimkitOk } from './helpers.js';

/**
 * One writer per state dir (the writer lock, docs/decisions/007-writer-lock.md):
 * `shimkit enqueue` processes racing on one mock, and one killed at each step
 * of an append. Through the real shim, on the sh fast path and with every
 * call through the runner (`SHIMKIT_FAST_PATH=0` when the mock is made): the
 * first with 8 writers in writers.test.ts, both with 16 in writers.stress.test.ts.
 */
export const WRITER_PATHS = {
  sh: { path: 'the sh fast path', env: { SHIMKIT_FAST_PATH: '1' } },
  runner: { path: 'the runner (SHIMKIT_FAST_PATH=0)', env: { SHIMKIT_FAST_PATH: '0' } },
};

interface Served {
  stdout: string;
  response: number | undefined;
}

/** Run `n` calls of the shim at once; what each printed and which response its record names. */
async function callAll(d: string, name: string, n: number): Promise<Served[]> {
  const shim = join(d, 'bin', name);
  const exits = await Promise.all(
    Array.from({ length: n }, (_, i) => runCommand(shim, [`call-${i}`])),
  );
  for (const exit of exits) expect(exit.stderr.toString()).toBe('');
  const calls = JSON.parse(await shimkitOk(['calls', d, name, '--json'])) as {
    argv: string[];
    response: number;
  }[];
  return exits.map((exit, i) => ({
    stdout: exit.stdout.toString(),
    response: calls.find((c) => c.argv[0] === `call-${i}`)?.response,
  }));
}

/** Each call got a different response, and printed what the queue holds at that line. */
function expectServedOnce(d: string, name: string, served: Served[], total: number): void {
  const lines = queueLines(d, name);
  expect(lines).toHaveLength(total);
  expect(served.map((s) => s.response).sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual(
    Array.from({ length: total }, (_, i) => i + 1),
  );
  for (const s of served) expect(s.stdout).toBe(lines[(s.response as number) - 1]?.stdout);
}

/** Whether a process is stopped (state T in /proc/<pid>/stat). */
function stopped(pid: number): boolean {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'T';
}

/** Register the writer tests for one path of the calls, with `writers` racing enqueues of 4 responses each. */
export function describeWriters(
  { path, env }: { path: string; env: Record<string, string> },
  writers: number,
): void {
  describe(`writers racing on one mock, through ${path}`, () => {
    it(`CLI-01 ${writers} parallel shimkit enqueue processes, then ${writers * 4} parallel calls: each response served exactly once, each batch in its order`, async () => {
      const d = join(testDir(), 'mocks');
      await shimkitOk(['mock', 'git', '--dir', d], { env: { ...process.env, ...env } });
      const batches = Array.from({ length: writers }, (_, p) =>
        Array.from({ length: 4 }, (_, k) => ({ stdout: `p${p}-${k}\n` })),
      );
      await Promise.all(
        batches.map((batch) => shimkitOk(['enqueue', d, 'git', '--json', JSON.stringify(batch)])),
      );
      // Each process's 4 responses are contiguous and in order in the queue.
      const lines = queueLines(d, 'git').map((l) => l.stdout as string);
      expect([...lines].sort()).toEqual(
        batches
          .flat()
          .map((r) => r.stdout)
          .sort(),
      );
      for (let i = 0; i < writers * 4; i += 4) {
        const p = /^p(\d+)-0\n$/.exec(lines[i] as string)?.[1];
        expect(lines.slice(i, i + 4), `batch at line ${i + 1}`).toEqual(
          [0, 1, 2, 3].map((k) => `p${p}-${k}\n`),
        );
      }
      const served = await callAll(d, 'git', writers * 4);
      expectServedOnce(d, 'git', served, writers * 4);
      await shimkitOk(['verify', d]);
    });

    for (const step of ['locked', 'fragments', 'appended', 'settled'] as const) {
      it(`CLI-01 a shimkit enqueue killed with SIGKILL at "${step}" holds the next one up only until it dies, and no response is lost or served twice`, async () => {
        const d = join(testDir(), 'mocks');
        await shimkitOk(['mock', 'git', '--dir', d], { env: { ...process.env, ...env } });
        await shimkitOk(['enqueue', d, 'git', '--stdout', 'before\n']);
        const victim = spawnTracked(
          process.execPath,
          [
            CLI,
            'enqueue',
            d,
            'git',
            '--json',
            '[{"stdout":"victim-1\\n"},{"stdout":"victim-2\\n"}]',
          ],
          { env: { ...process.env, SHIMKIT_TEST_WRITER_STOP: step } },
        );
        const victimDone = completion(victim);
        await vi.waitFor(() => expect(stopped(victim.pid as number)).toBe(true), {
          timeout: 10_000,
          interval: 5,
        });
        // A second writer waits for the stopped one (it is alive) …
        const waiting = join(testDir(), 'waiting');
        const next = spawnTracked(
          process.execPath,
          [CLI, 'enqueue', d, 'git', '--stdout', 'after\n'],
          {
            env: { ...process.env, SHIMKIT_TEST_WRITER_WAITING: waiting },
          },
        );
        const nextDone = completion(next);
        await vi.waitFor(() => expect(readFileSync(waiting, 'utf8')).toBe(String(victim.pid)), {
          timeout: 10_000,
          interval: 5,
        });
        // … and goes on at once when it is killed.
        const killedAt = Date.now();
        victim.kill('SIGKILL');
        expect((await victimDone).signal).toBe('SIGKILL');
        const after = await nextDone;
        expect(after.stderr.toString()).toBe('');
        expect(after.code).toBe(0);
        expect(Date.now() - killedAt).toBeLessThan(5_000);
        // The victim's responses are in the queue whole if it got to append them, else not at all.
        const appended = step === 'appended' || step === 'settled';
        const expected = ['before\n', ...(appended ? ['victim-1\n', 'victim-2\n'] : []), 'after\n'];
        expect(queueLines(d, 'git').map((l) => l.stdout)).toEqual(expected);
        // Two calls more than responses: each response once, the last three times (two repeats).
        const served = await callAll(d, 'git', expected.length + 2);
        const times = new Map<number, number>();
        for (const s of served) {
          expect(s.stdout).toBe(expected[(s.response as number) - 1]);
          times.set(s.response as number, (times.get(s.response as number) ?? 0) + 1);
        }
        expect([...times.entries()].sort((a, b) => a[0] - b[0])).toEqual(
          expected.map((_, i) => [i + 1, i + 1 === expected.length ? 3 : 1]),
        );
      });
    }
  });
}

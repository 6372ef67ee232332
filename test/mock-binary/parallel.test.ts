import { readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMockBinary, type MockResponse } from '../../src/index.js';
import { completion, runCommand, spawnTracked, testDir } from '../helpers/index.js';
import {
  assertExactlyOnce,
  callInParallel,
  generationDir,
  seededRandom,
} from '../helpers/parallel.js';

const responses = (n: number): MockResponse[] =>
  Array.from({ length: n }, (_, i) => ({ stdout: `r${i + 1}\n` }));
const ROUNDS = Array.from({ length: 10 }, (_, i) => i + 1);

describe('exactly once under parallel calls', () => {
  it.each(ROUNDS)(
    'MB-07 64 parallel calls claim 64 responses exactly once, none lost (round %i of 10)',
    async () => {
      await using git = createMockBinary('git', { responses: responses(64), onExhausted: 'fail' });
      const exits = await callInParallel(git, 64);
      expect(exits.map((e) => e.stderr.toString()).filter(Boolean)).toEqual([]);
      expect(exits.every((e) => e.code === 0)).toBe(true);
      const printed = exits.map((e) => e.stdout.toString()).sort();
      expect(printed).toEqual(
        responses(64)
          .map((r) => r.stdout)
          .sort(),
      );
      expect(git.callCount()).toBe(64);
      const claimed = git.calls().map((c) => c.response ?? 0);
      expect(claimed.sort((a, b) => a - b)).toEqual(Array.from({ length: 64 }, (_, i) => i + 1));
      assertExactlyOnce(git, exits);
      git.assertDone();
    },
  );

  it('MB-07 64 parallel calls through xargs -P 64 claim every response exactly once', async () => {
    await using git = createMockBinary('git', { responses: responses(64), onExhausted: 'fail' });
    const ids = `${Array.from({ length: 64 }, (_, k) => `c${k + 1}`).join('\n')}\n`;
    const r = await runCommand('xargs', ['-P', '64', '-n', '1', git.path], { input: ids });
    expect(r.stderr.toString()).toBe('');
    expect(r.code).toBe(0);
    // Each response is one write smaller than PIPE_BUF, so lines do not interleave.
    expect(r.stdout.toString().split('\n').filter(Boolean).sort()).toEqual(
      responses(64)
        .map((x) => x.stdout?.trim())
        .sort(),
    );
    expect(git.callCount()).toBe(64);
    git.assertDone();
  });

  it('MB-02 MB-07 exactly-once does not rest on the lock: claims stay unique while the lock is deleted continuously', async () => {
    await using git = createMockBinary('git', { responses: responses(64), onExhausted: 'fail' });
    const lock = join(generationDir(git), 'lock');
    // A vandal that removes the lock file as fast as it can, so callers often
    // believe they hold the lock at the same time.
    const vandal = spawnTracked('bash', ['-c', 'while :; do rm -f "$1"; done', 'vandal', lock]);
    const exits = await callInParallel(git, 64);
    vandal.kill('SIGKILL');
    expect(exits.every((e) => e.code === 0)).toBe(true);
    assertExactlyOnce(git, exits);
    expect(git.callCount()).toBe(64);
    git.assertDone();
  });

  it('REL-02 MB-07 exactly once under random interleavings of calls and enqueues (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 12 }), // responses queued up front
        fc.integer({ min: 1, max: 12 }), // parallel calls
        fc.integer({ min: 0, max: 6 }), // responses enqueued while calls run
        async (upFront, calls, later) => {
          await using git = createMockBinary('git', { responses: responses(upFront) });
          const children = Array.from({ length: calls }, (_, k) =>
            spawnTracked(git.path, [`c${k + 1}`]),
          );
          const done = Promise.all(children.map(completion));
          git.enqueue(responses(upFront + later).slice(upFront));
          const exits = await done;
          expect(exits.every((e) => e.code === 0)).toBe(true);
          expect(git.callCount()).toBe(calls);
          assertExactlyOnce(git, exits);
          const fromQueue = git.calls().filter((c) => c.responseSource === 'queue').length;
          expect(fromQueue).toBeGreaterThanOrEqual(Math.min(calls, upFront));
          expect(fromQueue).toBeLessThanOrEqual(Math.min(calls, upFront + later));
        },
      ),
      { numRuns: 6 },
    );
  });
});

describe('a killed lock holder does not wedge the mock', () => {
  it('MB-08 SIGKILLed calls during a 64-call storm: the rest finish, nothing is served twice, the next call gets the lock within 1 s', async () => {
    const seed = Date.now();
    const random = seededRandom(seed);
    await using git = createMockBinary('git', { responses: responses(64), onExhausted: 'fail' });
    const children = Array.from({ length: 64 }, (_, k) => spawnTracked(git.path, [`c${k + 1}`]));
    const exits = Promise.all(children.map(completion));
    const victims = children.filter(() => random() < 0.35);
    // Kill at random moments across the storm (start-up, waiting, holding the lock, writing).
    for (const victim of victims) setTimeout(() => victim.kill('SIGKILL'), random() * 400);
    const results = await exits;
    const survivors = results.filter((r) => r.signal === null);
    expect(survivors.length, `seed ${seed}`).toBeGreaterThan(0);
    for (const r of survivors) expect(r.code, `seed ${seed}: ${r.stderr}`).toBe(0);
    assertExactlyOnce(git, results);

    const next = await runCommand(git.path, ['after-storm']);
    const unused =
      64 -
      git.calls().filter((c) => c.responseSource === 'queue' && c.argv[0] !== 'after-storm').length;
    expect(next.code, `seed ${seed}: ${next.stderr}`).toBe(unused > 0 ? 0 : 123);
    const call = git.calls().find((c) => c.argv[0] === 'after-storm');
    expect(call?.lockWaitMs, `seed ${seed}`).toBeLessThan(1000);
    assertExactlyOnce(git, results);
  });

  it('MB-08 a process SIGKILLed while holding the lock: the next call takes the lock within 1 s and the queue is intact', async () => {
    await using git = createMockBinary('git', { responses: responses(2) });
    const gen = generationDir(git);
    // Take the lock exactly as the protocol does (pid in a temp file, linked into place), then die holding it.
    const holder = spawnTracked(process.execPath, [
      '-e',
      `const fs = require('fs');
       fs.writeFileSync(process.argv[1] + '.tmp', process.pid + '\\n');
       fs.linkSync(process.argv[1] + '.tmp', process.argv[1]);
       console.log('locked'); setInterval(() => {}, 1e6);`,
      join(gen, 'lock'),
    ]);
    const exited = completion(holder);
    await new Promise<void>((ready) =>
      holder.stdout?.on('data', (d: Buffer) => d.toString().includes('locked') && ready()),
    );
    expect(readFileSync(join(gen, 'lock'), 'utf8')).toBe(`${holder.pid}\n`);
    holder.kill('SIGKILL');
    await exited;

    const r = await runCommand(git.path, ['next']);
    expect([r.code, r.stdout.toString(), r.stderr.toString()]).toEqual([0, 'r1\n', '']);
    expect(git.lastCall()?.lockWaitMs).toBeLessThan(1000);
    expect((await runCommand(git.path)).stdout.toString()).toBe('r2\n');
    git.assertDone();
  });

  it('MB-08 an unreadable or garbage lock file is taken over after a short grace, never fatal', async () => {
    await using git = createMockBinary('git', { responses: responses(2) });
    const lock = join(generationDir(git), 'lock');
    writeFileSync(lock, 'garbage');
    const fresh = await runCommand(git.path);
    expect([fresh.code, fresh.stdout.toString()]).toEqual([0, 'r1\n']);
    expect(git.lastCall()?.lockWaitMs).toBeLessThan(1000);

    writeFileSync(lock, '');
    const old = new Date(Date.now() - 60_000);
    utimesSync(lock, old, old);
    const r = await runCommand(git.path);
    expect([r.code, r.stdout.toString()]).toEqual([0, 'r2\n']);
  });

  it('MB-08 the lock file is never seen without its owner pid', async () => {
    await using git = createMockBinary('git', { responses: responses(32) });
    const lock = join(generationDir(git), 'lock');
    const dir = testDir();
    const watcher = spawnTracked('python3', [
      '-c',
      `import os, sys, re
lock, stop = sys.argv[1], sys.argv[2]
seen = bad = 0
print("ready", flush=True)
while not os.path.exists(stop):
    try:
        with open(lock) as f: text = f.read()
    except OSError: continue
    seen += 1
    if not re.fullmatch(r"[1-9][0-9]*\\n", text): bad += 1; print("BAD", repr(text), flush=True)
print("seen", seen, "bad", bad, flush=True)`,
      lock,
      join(dir, 'stop'),
    ]);
    const watched = completion(watcher);
    await new Promise<void>((ready) => watcher.stdout?.once('data', () => ready()));
    await callInParallel(git, 32);
    writeFileSync(join(dir, 'stop'), '');
    const out = (await watched).stdout.toString();
    expect(out).toMatch(/^ready\nseen \d+ bad 0\n$/);
    expect(Number(/seen (\d+)/.exec(out)?.[1])).toBeGreaterThan(0);
  });

  it('MB-08 a lock left by a dead pid is taken over at once', async () => {
    await using git = createMockBinary('git', { responses: responses(1) });
    const dead = await runCommand('true');
    writeFileSync(join(generationDir(git), 'lock'), `${dead.pid}\n`);
    const r = await runCommand(git.path);
    expect([r.code, r.stdout.toString()]).toEqual([0, 'r1\n']);
    expect(git.lastCall()?.lockWaitMs).toBeLessThan(1000);
  });
});

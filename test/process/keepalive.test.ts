import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import {
  completion,
  type Exit,
  firstJsonLine,
  isAlive,
  spawnTracked,
  testDir,
} from '../helpers/index.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));

interface Report {
  root?: string;
  groups: number[];
  pids: number[];
}

/** Kill what a fixture reported, and remove its sandbox: nothing outlives the test. */
function killReported(report: Report): void {
  for (const group of report.groups) {
    try {
      process.kill(-group, 'SIGKILL');
    } catch {}
  }
  if (report.root) rmSync(report.root, { recursive: true, force: true });
}

/** `exit`, or a rejection once `ms` pass first (the fixture is then killed by spawnTracked). */
function within(exit: Promise<Exit>, ms: number, what: string): Promise<Exit> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not exit within ${ms} ms`)), ms);
  });
  return Promise.race([exit, late]).finally(() => clearTimeout(timer));
}

async function allGone(pids: number[]): Promise<void> {
  await vi.waitFor(
    () => {
      for (const pid of pids) expect(isAlive(pid), `pid ${pid}`).toBe(false);
    },
    { timeout: 5000, interval: 20 },
  );
}

describe('forgotten processes do not keep the test runner alive', () => {
  it('SP-10 a script that spawns processes and never closes them exits by itself, and they are ended', async () => {
    const child = spawnTracked(process.execPath, [fixture('forgotten-process.mjs')]);
    const exit = completion(child);
    const report = await firstJsonLine<Report>(child);
    onTestFinished(() => killReported(report));
    // (They ran: the script saw their output. It may already be exiting now.)

    const result = await within(exit, 10_000, 'the script');

    expect(result).toMatchObject({ code: 0, signal: null });
    expect(result.stderr.toString()).toBe('');
    await allGone(report.pids); // the exit hook killed the groups, grandchild and all
    expect(existsSync(report.root as string)).toBe(false);
  });

  it('SP-10 node --test exits after a test that forgot a process, and the process is ended', async () => {
    const reportFile = join(testDir(), 'report.json');
    // Its own process group, so that on failure the test file's subprocess goes too.
    const child = spawnTracked(
      process.execPath,
      ['--test', '--test-reporter=tap', fixture('forgotten-process.node-test.mjs')],
      { env: { ...process.env, REPORT_FILE: reportFile }, detached: true },
    );
    const exit = completion(child);
    onTestFinished(() => {
      try {
        process.kill(-(child.pid as number), 'SIGKILL');
      } catch {}
      if (existsSync(reportFile)) killReported(JSON.parse(readFileSync(reportFile, 'utf8')));
    });

    const result = await within(exit, 20_000, 'node --test');

    expect(result.stdout.toString()).toContain('# pass 1');
    expect(result).toMatchObject({ code: 0, signal: null });
    const report = JSON.parse(readFileSync(reportFile, 'utf8')) as Report;
    await allGone(report.pids);
  });

  it('SP-10 awaiting wait(), waitForOutput(), run(), send() and close() still gets each result', async () => {
    // Each child finishes only after a while, and nothing else keeps the script
    // alive: if an await let go of the event loop, Node would end the script
    // there, before it printed the results.
    const child = spawnTracked(process.execPath, [fixture('awaits-process.mjs')]);

    const result = await within(completion(child), 20_000, 'the script');

    expect(result.stderr.toString()).toBe('');
    expect(result.stdout.toString(), 'the script ended before its results were in').not.toBe('');
    expect(JSON.parse(result.stdout.toString())).toEqual({
      wait: { exitCode: 7, timedOut: false },
      match: 'ready',
      run: { exitCode: 0, stdout: 'ran\n' },
      send: { exitCode: 0, stdout: 'got answer\n' },
      close: { signal: 'SIGKILL' },
    });
    expect(result).toMatchObject({ code: 0, signal: null });
  });
});

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { completion, firstJsonLine, spawnTracked } from '../helpers/index.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/mock-then-die.mjs', import.meta.url));

interface Report {
  roots: string[];
  existed: boolean;
  original: string;
  installed: string;
}

async function dieAndReport(mode: string, signal?: NodeJS.Signals) {
  const child = spawnTracked(process.execPath, [FIXTURE, mode]);
  const exit = completion(child);
  const report = await firstJsonLine<Report>(child);
  // While alive (as the child saw it): the temp dirs exist and are on PATH.
  expect(report.existed).toBe(true);
  expect(
    report.installed.startsWith(
      report.roots
        .map((r) => `${r}/bin`)
        .reverse()
        .join(':'),
    ),
  ).toBe(true);
  if (signal) child.kill(signal);
  const result = await exit;
  const pathAtExit = /PATH-AT-EXIT=(.*)\n/.exec(result.stderr.toString())?.[1];
  return {
    report,
    result,
    pathAtExit: pathAtExit === undefined ? undefined : JSON.parse(pathAtExit),
  };
}

describe('cleanup when the test process dies', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    'MB-10 a test process killed by %s removes every temp dir it made and restores PATH',
    async (signal) => {
      const { report, result, pathAtExit } = await dieAndReport('wait', signal);
      expect(result.signal).toBe(signal); // the signal still ends the process
      for (const root of report.roots) expect(existsSync(root), root).toBe(false);
      expect(pathAtExit).toBe(report.original);
    },
  );

  it('MB-10 an uncaught exception removes every temp dir and restores PATH', async () => {
    const { report, result, pathAtExit } = await dieAndReport('throw');
    expect(result.code).toBe(1);
    expect(result.stderr.toString()).toContain('uncaught on purpose');
    for (const root of report.roots) expect(existsSync(root), root).toBe(false);
    expect(pathAtExit).toBe(report.original);
  });

  it('MB-10 process.exit() removes every temp dir and restores PATH', async () => {
    const { report, result, pathAtExit } = await dieAndReport('exit');
    expect(result.code).toBe(3);
    for (const root of report.roots) expect(existsSync(root), root).toBe(false);
    expect(pathAtExit).toBe(report.original);
  });
});

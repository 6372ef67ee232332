// PERF-11: `npm run bench:compare` builds a ref beside the working tree and
// measures both in alternating rounds, through the real bench (the cheap `cli`
// suite, two calls a round): npm run test:stress, since it builds a commit.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FigureComparison } from '../../bench/stats.mjs';
import { runCommand, testDir } from '../helpers/index.js';

const REPO = new URL('../..', import.meta.url).pathname;
const SCRIPT = join(REPO, 'scripts', 'bench-compare.mjs');

describe('bench:compare (stress)', () => {
  it('PERF-11 HEAD against the working tree: every figure with both medians, ranges, p and interval; the build is kept for the next compare', async () => {
    const tmp = testDir('shimkit-compare-');
    const env = { ...process.env, TMPDIR: tmp };
    const json = join(tmp, 'out.json');
    const args = ['--only', 'cli', '--rounds', '2', '--iterations', '2', '--json', json];
    const first = await runCommand(process.execPath, [SCRIPT, 'HEAD', ...args], { cwd: REPO, env });
    const out = first.stdout.toString();
    const err = first.stderr.toString();
    expect(first.code, err).toBe(0);
    expect(err).toMatch(/building [0-9a-f]{12}/);
    expect(err).toContain('round 2 of 2');
    expect(out).toMatch(/^old: HEAD \([0-9a-f]{12}\)$/m);
    expect(out).toMatch(/^new: working tree \([0-9a-f]{12}/m);
    expect(out).toContain('2 rounds each, alternating');
    expect(out).toContain('the smallest p 2 rounds can give is 0.33');
    expect(out).toMatch(/^figure\s+old median \(range\)\s+new median \(range\)\s+change\s+p/m);
    expect(out).toMatch(/^cli\.enqueueMs\s+\d/m);
    expect(out).toMatch(/\d+ of \d+ figures changed beyond the noise/);
    const report = JSON.parse(readFileSync(json, 'utf8')) as {
      rounds: number;
      results: Array<FigureComparison & { figure: string }>;
    };
    expect(report.rounds).toBe(2);
    const figures = report.results.map((r) => r.figure);
    expect(figures).toEqual(
      expect.arrayContaining(['cli.enqueueMs', 'cli.callsMs', 'cli.enqueueRatioToNode']),
    );
    for (const r of report.results) {
      expect(r.old.rounds).toBe(2);
      expect(r.new.rounds).toBe(2);
      expect(r.old.min).toBeLessThanOrEqual(r.old.median);
      expect(r.p).toBeGreaterThanOrEqual(1 / 3 - 1e-9); // two rounds cannot show a change
      expect(r.changed).toBe(false);
    }
    // HEAD against itself: its build is found under its commit, not made again.
    const again = await runCommand(
      process.execPath,
      [SCRIPT, 'HEAD', '--against', 'HEAD', ...args],
      { cwd: REPO, env },
    );
    expect(again.code, again.stderr.toString()).toBe(0);
    expect(again.stderr.toString()).not.toContain('building');
    expect(again.stdout.toString()).toMatch(/^new: HEAD \([0-9a-f]{12}\)$/m);
    // A bench that fails: exit 1 with its error, and no scratch dir left behind.
    const failed = await runCommand(
      process.execPath,
      [SCRIPT, 'HEAD', '--only', 'proxy.throughput.3B', '--rounds', '2'],
      { cwd: REPO, env },
    );
    expect(failed.code).toBe(1);
    expect(failed.stderr.toString()).toContain('the bench failed on');
    expect(failed.stderr.toString()).toContain('no size 3B');
    expect(
      readdirSync(tmp).filter((name) => name.startsWith('shimkit-bench-compare-run-')),
    ).toEqual([]);
  }, 300_000);
});

import { existsSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { createSandbox, spawnProcess } from '../../src/index.js';
import { completion, firstJsonLine, isAlive, spawnTracked } from '../helpers/index.js';

const OWNER = fileURLToPath(new URL('../fixtures/process-owner.mjs', import.meta.url));

interface Report {
  root: string;
  groups: number[];
  pids: number[];
}

/** Start the owner fixture, read its report, then end it with SIGTERM. */
async function ownerKilledBySigterm(mode = ''): Promise<Report> {
  const child = spawnTracked(process.execPath, [OWNER, mode]);
  const exit = completion(child);
  const report = await firstJsonLine<Report>(child);
  onTestFinished(() => {
    // Whatever the outcome, nothing outlives the test.
    for (const group of report.groups) {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {}
    }
    rmSync(report.root, { recursive: true, force: true });
  });
  expect(existsSync(report.root)).toBe(true);
  for (const pid of report.pids) expect(isAlive(pid)).toBe(true);
  child.kill('SIGTERM');
  const result = await exit;
  expect(result.signal).toBe('SIGTERM'); // signal-exit re-raised it after the cleanup
  return report;
}

describe('cleanup when the test process dies', () => {
  it('SP-07 a test process killed by SIGTERM takes its process groups and sandbox with it', async () => {
    const report = await ownerKilledBySigterm();

    await vi.waitFor(
      () => {
        for (const pid of report.pids) expect(isAlive(pid), `pid ${pid}`).toBe(false);
      },
      { timeout: 5000, interval: 20 },
    );
    expect(existsSync(report.root)).toBe(false);
  });

  it('SP-07 with keep: true the processes and the sandbox are left for debugging', async () => {
    const report = await ownerKilledBySigterm('keep');

    for (const pid of report.pids) expect(isAlive(pid)).toBe(true);
    expect(existsSync(report.root)).toBe(true);
  });

  it('SP-07 disposing a sandbox closes the processes started in it, then removes its dir', async () => {
    const sb = createSandbox();
    const p = spawnProcess('sh', ['-c', 'echo pid=$$; sleep 1000 & echo pid=$!; wait'], {
      sandbox: sb,
    });
    onTestFinished(() => p.close({ graceMs: 0 }).then(() => {}));
    await p.waitForOutput(/(pid=\d+\n){2}/);
    const pids = [...p.output().matchAll(/pid=(\d+)/g)].map((m) => Number(m[1]));
    expect(pids[0]).toBe(p.pid);

    await sb.dispose();

    expect(p.running).toBe(false);
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
    expect(existsSync(sb.root)).toBe(false);
  });
});

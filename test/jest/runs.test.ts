import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { completion, isAlive, runCommand, spawnTracked, testDir } from '../helpers/index.js';
import { inSystemTmpdir } from '../helpers/leaks.js';

const JEST = createRequire(import.meta.url).resolve('jest/bin/jest');
const CONFIG = fileURLToPath(new URL('./jest.config.cjs', import.meta.url));

/** jest in a child process, with its own temp dir (so its leftovers and sweeps are its own). */
function jest(file: string, extra: { esm?: boolean; hang?: boolean } = {}) {
  const tmp = testDir();
  const report = join(tmp, 'report.json');
  const env = {
    ...process.env,
    TMPDIR: tmp,
    SHIMKIT_REPORT: report,
    SHIMKIT_HANG: extra.hang ? '1' : '0',
    NODE_OPTIONS: extra.esm ? '--experimental-vm-modules --no-warnings' : '',
  };
  const args = [JEST, '--config', CONFIG, '--ci', '--runInBand', file];
  return { tmp, report, env, args };
}

/** Wait until the temp dir holds nothing of shimkit's (the watcher sweeps after jest is gone). */
async function expectSwept(tmp: string, dirs: string[]) {
  await vi.waitFor(
    () => {
      for (const dir of dirs) expect(existsSync(dir), dir).toBe(false);
      expect(readdirSync(tmp).filter((n) => n.startsWith('shimkit'))).toEqual([]);
    },
    { timeout: 15_000, interval: 50 },
  );
}

// The sweep, the registry or another user work in the system temp dir itself:
// the leak sanitizer's per-test TMPDIR is off here (inSystemTmpdir).
describe('under jest', inSystemTmpdir, () => {
  it.each([
    ['CommonJS', 'mock.test.cjs', false],
    ['ESM', 'mock.test.mjs', true],
  ])(
    'VT-04 %s: install() refuses with a message naming env(), env() works, and a normal exit leaves no temp dir or process',
    async (_kind, file, esm) => {
      const run = jest(file, { esm });
      const r = await runCommand(process.execPath, run.args, { env: run.env });
      expect(r.code, r.stderr.toString()).toBe(0);
      expect(r.stderr.toString()).toMatch(/Tests:\s+2 passed, 2 total/);
      const { dirs, pid } = JSON.parse(readFileSync(run.report, 'utf8'));
      await expectSwept(run.tmp, dirs);
      if (pid) await vi.waitFor(() => expect(isAlive(pid)).toBe(false), { timeout: 10_000 });
    },
  );

  it('VT-02 HT-11 PB-03 shimkit/jest registers the matchers with jest, toHaveReceivedRequest and toHaveReceivedToolResult too (the package export, dist build)', async () => {
    const run = jest('matchers.test.cjs');
    const r = await runCommand(process.execPath, run.args, { env: run.env });
    expect(r.code, r.stderr.toString()).toBe(0);
    expect(r.stderr.toString()).toMatch(/Tests:\s+3 passed, 3 total/);
  });

  it('HT-03 HT-06 a test that forgets a strict server passes, and at the exit of the process that ran it stderr names the server, where it was created and the call to add', async () => {
    const run = jest('forgotten-server.test.cjs');
    const r = await runCommand(process.execPath, run.args, { env: run.env });
    const err = r.stderr.toString();
    expect(r.code, err).toBe(0);
    expect(err).toMatch(/Tests:\s+1 passed, 1 total/);
    expect(err).toMatch(
      /shimkit: warning: the strict mock server http:\/\/127\.0\.0\.1:\d+, created at .*forgotten-server\.test\.cjs:7:/,
    );
    expect(err).toContain('1 scripted use was never made');
    expect(err).toContain('`api.assertDone()`');
  });

  it('VT-04 SP-11 jest ended by SIGTERM leaves no temp dir or process', async () => {
    const run = jest('mock.test.cjs', { hang: true });
    const child = spawnTracked(process.execPath, run.args, { env: run.env });
    const ended = completion(child);
    // Parsed inside the wait: the report may be there but not yet written.
    const { dirs, pid } = await vi.waitFor(() => JSON.parse(readFileSync(run.report, 'utf8')), {
      timeout: 20_000,
    });
    expect(dirs.every((d: string) => existsSync(d))).toBe(true);
    child.kill('SIGTERM');
    await ended;
    await expectSwept(run.tmp, dirs);
    await vi.waitFor(() => expect(isAlive(pid)).toBe(false), { timeout: 10_000 });
  });
});

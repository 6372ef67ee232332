import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { completion, spawnTracked, testDir } from '../helpers/index.js';
import { inSystemTmpdir } from '../helpers/leaks.js';
import { REPO, shimkit, shimkitOk } from './helpers.js';

// The sweep, the registry or another user work in the system temp dir itself:
// the leak sanitizer's per-test TMPDIR is off here (inSystemTmpdir).
describe('shimkit demo and clean', inSystemTmpdir, () => {
  it('CLI-03 shimkit demo runs the orchestrator against mocked git and deploy, then a proxy that drops a frame, and exits 0', async () => {
    const out = await shimkitOk(['demo']);
    expect(out).toMatch(/orchestrator exited with 2 after \d+ ms/);
    expect(out).toMatch(/#1 git rev-parse --abbrev-ref HEAD {2}-> response #1, exit 0/);
    for (const line of [
      'deployed as d-101',
      'deployed as d-102',
      'FAILED (exit 3) quota exceeded',
    ]) {
      expect(out.split(line).length - 1, line).toBe(1);
    }
    expect(out).toContain('fault: drop c2s frame 2');
    expect(out).toContain('forwarded c2s 2 frames');
    expect(out).toContain('demo: ok');
  });

  it('SP-11 shimkit clean removes the mock dir of a process killed before it could clean up, and nothing kept', async () => {
    // Its own TMPDIR, so no other shimkit process on the machine sweeps it first.
    const tmp = testDir();
    const env = { ...process.env, TMPDIR: tmp, SHIMKIT_SWEEP: '0' };
    const owner = spawnTracked(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { createMockBinDir } from 'shimkit';
         const bin = createMockBinDir(); bin.mock('git');
         console.log(bin.root); process.kill(process.pid, 'SIGKILL');`,
      ],
      { env, cwd: REPO },
    );
    const exit = await completion(owner);
    expect(exit.signal).toBe('SIGKILL');
    const root = exit.stdout.toString().trim();
    expect(existsSync(root)).toBe(true);
    const kept = join(tmp, 'kept');
    mkdirSync(kept);
    await shimkitOk(['mock', 'git', '--dir', join(kept, 'mocks')], { env });
    const r = await shimkit(['clean', '--json'], { env: { ...env, SHIMKIT_SWEEP: '1' } });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout.toString()).removed).toContain(root);
    expect(existsSync(root)).toBe(false);
    expect(existsSync(join(kept, 'mocks', 'shimkit.json'))).toBe(true);
    expect((await shimkitOk(['clean'], { env })).trim()).toBe(
      'clean: 0 dirs removed, 0 process groups killed, 0 sockets removed',
    );
  });
});

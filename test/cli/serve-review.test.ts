import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { isAlive } from '../helpers/index.js';
import { shimkit } from './helpers.js';
import { serverTestDir } from './server-helpers.js';

// A failing regression test from the hostile review of createMockServer (branch server-review).

describe('shimkit serve on one dir (HT-10)', () => {
  it('HT-10 two `serve --detach` started at once on one dir: one exits 3, no second server keeps running unseen', async () => {
    const base = serverTestDir();
    const codes: string[] = [];
    for (let round = 0; round < 4; round++) {
      const d = join(base, `api${round}`);
      const [a, b] = await Promise.all([
        shimkit(['serve', '--dir', d, '--detach', '--json']),
        shimkit(['serve', '--dir', d, '--detach', '--json']),
      ]);
      const pids = [a, b]
        .filter((r) => r.code === 0)
        .map((r) => (JSON.parse(r.stdout.toString()) as { pid: number }).pid);
      onTestFinished(() => {
        for (const pid of pids) {
          try {
            process.kill(-pid, 'SIGKILL');
          } catch {}
        }
      });
      codes.push(`${[a.code, b.code].sort().join(',')} alive=${pids.filter(isAlive).length}`);
    }
    expect(codes).toEqual(Array(4).fill('0,3 alive=1'));
  });
});

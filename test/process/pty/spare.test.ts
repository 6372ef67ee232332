// SP-13: the python helper started ahead of the next PTY spawn (python's
// start is most of what a PTY costs). It must be used when it can be, never
// when it cannot, and never keep Node alive or outlive the test process.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { isAlive } from '../../helpers/index.js';
import { spares, spawned, theSpare } from '../../helpers/pty.js';

const DIST = fileURLToPath(new URL('../../../dist/index.js', import.meta.url));

describe('SP-13 the spare PTY helper', () => {
  it.skipIf(process.platform !== 'linux')(
    'SP-13 the next PTY spawn runs in the helper started after the last one',
    async () => {
      const old = new Set(spares());
      const first = spawned('true', [], { pty: true });
      await first.wait({ timeoutMs: 10_000 });
      const spare = await theSpare(old);
      const second = spawned('sh', ['-c', 'echo "in $PPID"'], { pty: true });
      expect(second.pid).toBe(spare);
      await second.waitForScreen(`in ${spare}`);
    },
  );

  it.skipIf(process.platform !== 'linux')(
    'SP-13 a spare killed before use is not used (its exit not yet seen by Node)',
    async () => {
      const old = new Set(spares());
      await spawned('true', [], { pty: true }).wait({ timeoutMs: 10_000 });
      const spare = await theSpare(old);
      process.kill(spare, 'SIGKILL');
      await vi.waitFor(() => expect(isAlive(spare)).toBe(false));
      const p = spawned('sh', ['-c', 'echo fine'], { pty: true }); // synchronously: before Node reaps it
      expect(p.pid).not.toBe(spare);
      expect(await p.wait({ timeoutMs: 10_000 })).toMatchObject({ exitCode: 0 });
      expect(p.screen().lines[0]).toBe('fine');
    },
  );

  it.skipIf(process.platform !== 'linux')(
    'SP-13 a spare keeps no test runner alive and does not outlive the test process',
    async () => {
      // A script that uses a PTY and then just returns: Node must exit at once,
      // and the spare it left must be gone with it.
      const script = `
      const { spawnProcess } = await import(${JSON.stringify(DIST)});
      const { readdirSync, readFileSync } = await import('node:fs');
      const p = spawnProcess('sh', ['-c', 'echo hi'], { pty: true });
      await p.wait();
      const helpers = () => readdirSync('/proc').filter((pid) => {
        try {
          const stat = readFileSync('/proc/' + pid + '/stat', 'latin1');
          return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] === String(process.pid) &&
            readFileSync('/proc/' + pid + '/cmdline', 'latin1').includes('pty.py');
        } catch { return false; }
      }).map(Number);
      const deadline = Date.now() + 10000;
      while (!helpers().some((pid) => pid !== p.pid)) {
        if (Date.now() > deadline) break; // the spare never came: the parent's check fails
        await new Promise((resolve) => setImmediate(resolve));
      }
      console.log(JSON.stringify(helpers().filter((pid) => pid !== p.pid)));
    `;
      // Killed after 20 s, below the spare's own 30 s idle timeout: a spare that
      // held Node up fails this on the exit status.
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      const left = JSON.parse(r.stdout) as number[];
      expect(left).toHaveLength(1); // the spare
      await vi.waitFor(() => expect(isAlive(left[0] as number)).toBe(false));
    },
  );
});

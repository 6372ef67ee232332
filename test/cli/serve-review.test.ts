import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { isAlive } from '../helpers/index.js';
import { shimkit, shimkitOk } from './helpers.js';
import { serveDetached, serverTestDir, waitGone } from './server-helpers.js';

// Regression tests from the hostile review of createMockServer (branch server-review).

/** Two `shimkit serve --dir d --detach --json` at once: their exit codes (sorted), and how many of their servers run. */
async function raceTwo(d: string): Promise<{ codes: string; alive: number[]; stderr: string }> {
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
  return {
    codes: [a.code, b.code].sort().join(','),
    alive: pids.filter(isAlive),
    stderr: [a, b].map((r) => r.stderr.toString()).join(''),
  };
}

describe('shimkit serve on one dir (HT-10)', () => {
  it('HT-10 two `serve --detach` started at once on one dir: one exits 3, no second server keeps running unseen', async () => {
    const base = serverTestDir();
    const codes: string[] = [];
    for (let round = 0; round < 4; round++) {
      const { codes: c, alive } = await raceTwo(join(base, `api${round}`));
      codes.push(`${c} alive=${alive.length}`);
    }
    expect(codes).toEqual(Array(4).fill('0,3 alive=1'));
  });

  it('HT-10 the loser of a start race says the dir is taken and by which pid; after `shimkit stop` no server of that dir is left', async () => {
    const base = serverTestDir();
    for (let round = 0; round < 3; round++) {
      const d = join(base, `api${round}`);
      const { codes, alive, stderr } = await raceTwo(d);
      expect(codes).toBe('0,3');
      const [winner] = alive as [number];
      // the claim, or (when the winner already wrote server.json) the check before it
      expect(stderr).toMatch(
        new RegExp(`a mock server already runs[^\n]* in ${d}[^\n]*pid ${winner}[^\n]*shimkit stop`),
      );
      expect(JSON.parse(readFileSync(join(d, 'server.lock'), 'utf8'))).toEqual({
        pid: winner,
        startedAt: expect.any(Number),
      });
      expect(JSON.parse(readFileSync(join(d, 'server.json'), 'utf8')).pid).toBe(winner);
      await shimkitOk(['stop', d]);
      expect(isAlive(winner)).toBe(false);
      expect(existsSync(join(d, 'server.lock'))).toBe(false);
      expect(existsSync(join(d, 'server.json'))).toBe(false);
    }
  });

  it('HT-10 a SIGKILLed server leaves a stale server.lock: two serves started at once on that dir still give one server, and stop leaves none', async () => {
    const base = serverTestDir();
    for (let round = 0; round < 3; round++) {
      const d = join(base, `api${round}`);
      const killed = await serveDetached(d);
      process.kill(-killed.pid, 'SIGKILL');
      await waitGone(killed.pid);
      expect(existsSync(join(d, 'server.lock'))).toBe(true); // stale: its pid is gone
      const { codes, alive } = await raceTwo(d);
      expect(`${codes} alive=${alive.length}`).toBe('0,3 alive=1');
      await shimkitOk(['stop', d]);
      expect(alive.filter(isAlive)).toEqual([]);
    }
  });

  it('HT-10 a server whose server.lock is taken from it (moved, replaced) stops within a second', async () => {
    const d = join(serverTestDir(), 'api');
    const served = await serveDetached(d);
    renameSync(join(d, 'server.lock'), join(d, 'moved.lock'));
    writeFileSync(
      join(d, 'server.lock'),
      `${JSON.stringify({ pid: process.pid, startedAt: 1 })}\n`,
    );
    await waitGone(served.pid, 3000);
    expect(readFileSync(join(d, 'server.log'), 'utf8')).toContain(
      `server.lock is no longer this server's (pid ${served.pid}): stopping.`,
    );
    // it removed neither the lock that is not its own, nor anything a later server would need
    expect(JSON.parse(readFileSync(join(d, 'server.lock'), 'utf8')).pid).toBe(process.pid);
  });
});

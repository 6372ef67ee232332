// Ending a process tree that shares its caller's process group (src/process/tree.ts),
// as a passthrough's real command does (MB-15): real processes, each platform's way of
// reading the tree run on this machine where it can be.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { killTree, parsePsTable, procTable, psTable } from '../../src/process/tree.js';
import { isAlive, spawnTracked, testDir } from '../helpers/index.js';

/**
 * A process whose child starts a sleeping grandchild and then keeps starting
 * sleeping children, writing each pid to `pids`; every one is killed when the
 * test finishes if it still runs.
 */
function forkingTree(dir: string): { root: number; pids: () => number[] } {
  const file = join(dir, 'pids');
  const script = [
    'echo $$ >>"$1"',
    'sh -c \'echo $$ >>"$1"; sleep 30 & echo $! >>"$1"; wait\' sh "$1" &',
    'while :; do sleep 30 & echo $! >>"$1"; sleep 0.05; done',
  ].join('\n');
  const child = spawnTracked('sh', ['-c', script, 'sh', file], { stdio: 'ignore' });
  const pids = () =>
    existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').map(Number) : [];
  onTestFinished(() => {
    for (const pid of pids()) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  });
  return { root: child.pid as number, pids };
}

describe('killing a process tree in its caller’s process group', () => {
  for (const platform of ['linux', 'darwin'] as const) {
    it(`MB-15 killTree stops and kills a process and every descendant while it keeps forking (the ${platform} branch: ${platform === 'linux' ? '/proc' : 'ps'})`, async () => {
      const tree = forkingTree(testDir());
      await vi.waitFor(() => expect(tree.pids().length).toBeGreaterThanOrEqual(6), {
        timeout: 10_000,
      });
      await killTree(tree.root, platform);
      const all = tree.pids();
      await vi.waitFor(() => expect(all.filter(isAlive)).toEqual([]), { timeout: 5000 });
      expect(tree.pids()).toEqual(all); // nothing forked after the kill
    });
  }

  it('MB-15 the tree is read from /proc stat (parent pid) or from ps -A -o pid= -o ppid=', () => {
    expect(parsePsTable('    1     0\n   42     1\n 43 1\n44 42\n\n')).toEqual(
      new Map([
        [0, [1]],
        [1, [42, 43]],
        [42, [44]],
      ]),
    );
    const stat = (pid: number, ppid: number) =>
      `${pid} (a) b) S ${ppid} ${pid} ${pid} 0 -1 0 ${Array(12).fill('0').join(' ')} 9 0 0`;
    const files: Record<string, string> = {
      '/proc/7/stat': stat(7, 1),
      '/proc/8/stat': stat(8, 7),
    };
    expect(
      procTable(
        () => ['7', '8', '9', 'self', 'sys'],
        (path) => files[path] ?? null,
      ),
    ).toEqual(
      new Map([
        [1, [7]],
        [7, [8]],
      ]),
    );
    expect(procTable(() => undefined)).toBeUndefined();
    // This process, as each reading sees it.
    expect(procTable()?.get(process.ppid)).toContain(process.pid);
    expect(psTable()?.get(process.ppid)).toContain(process.pid);
  });

  it('MB-15 on Windows the tree is taskkill’s; when taskkill cannot run, the process itself is still killed', async () => {
    const child = spawnTracked('sleep', ['30'], { stdio: 'ignore' });
    const pid = child.pid as number;
    // No taskkill under this SystemRoot: the branch falls back to killing the process.
    await killTree(pid, 'win32', { SystemRoot: testDir() });
    await vi.waitFor(() => expect(isAlive(pid)).toBe(false), { timeout: 5000 });
  });
});

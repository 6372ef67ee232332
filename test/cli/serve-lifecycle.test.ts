import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { callerPid } from '../../src/cli/server/lifecycle.js';
import { isAlive, spawnTracked } from '../helpers/index.js';
import { inSystemTmpdir } from '../helpers/leaks.js';
import { CLI, shimkit } from './helpers.js';
import { serverTestDir, stdoutUntil, waitGone } from './server-helpers.js';

/**
 * A node process that runs `shimkit serve --detach` (so it is the server's
 * owner), prints the server's pid, and then idles until it is killed.
 */
const OWNER = `
const { execFileSync } = require('node:child_process');
const [cli, dir, ...extra] = process.argv.slice(1);
execFileSync(process.execPath, [cli, 'serve', '--dir', dir, '--detach', ...extra], { stdio: ['ignore', 'ignore', 'inherit'] });
console.log('server ' + JSON.parse(require('node:fs').readFileSync(dir + '/server.json', 'utf8')).pid);
setInterval(() => {}, 60000);
`;

/** Start OWNER; the server's pid once it runs (the server is killed when the test ends). */
async function ownedServer(dir: string, extra: string[] = []) {
  const owner = spawnTracked(process.execPath, ['-e', OWNER, CLI, dir, ...extra]);
  const text = await stdoutUntil(owner, /server \d+\n/);
  const pid = Number(/server (\d+)/.exec(text)?.[1]);
  onTestFinished(() => {
    for (const target of [-pid, pid]) {
      try {
        if (isAlive(pid)) process.kill(target, 'SIGKILL');
      } catch {}
    }
  });
  return { owner, pid };
}

/** The registry entries naming a server in `dir`, in the registries of process `ownerPid`. */
function serverEntries(ownerPid: number, dir: string): unknown[] {
  return readdirSync(tmpdir())
    .filter((name) => name.startsWith(`shimkit-owner-${ownerPid}-`))
    .flatMap((name) =>
      readdirSync(join(tmpdir(), name)).map((file) =>
        JSON.parse(readFileSync(join(tmpdir(), name, file), 'utf8')),
      ),
    )
    .filter((entry) => entry.type === 'server' && entry.dir === dir);
}

// The sweep, the registry or another user work in the system temp dir itself:
// the leak sanitizer's per-test TMPDIR is off here (inSystemTmpdir).
describe(
  'a detached server ends with its owner, when idle, and is swept (HT-13)',
  inSystemTmpdir,
  () => {
    it('HT-13 serve --detach ends once the process that started it is SIGKILLed, and leaves nothing in its dir', async () => {
      const d = join(serverTestDir(), 'api');
      const { owner, pid } = await ownedServer(d);
      expect(isAlive(pid)).toBe(true);
      expect(serverEntries(owner.pid as number, d)).toEqual([
        { type: 'server', pid, start: expect.any(Number), dir: d },
      ]);
      owner.kill('SIGKILL');
      await waitGone(pid, 10_000);
      await vi.waitFor(() => expect(existsSync(d), `${d} is still there`).toBe(false), {
        timeout: 5000,
      });
      expect(serverEntries(owner.pid as number, d)).toEqual([]);
    });

    it('HT-13 shimkit clean stops a detached server whose owner is gone and removes its dir', async () => {
      const d = join(serverTestDir(), 'api');
      const { owner, pid } = await ownedServer(d);
      process.kill(pid, 'SIGSTOP'); // it cannot see its owner go: the sweep has to stop it
      owner.kill('SIGKILL');
      await waitGone(owner.pid as number);
      const r = await shimkit(['clean', '--json']);
      expect(r.code, r.stderr.toString()).toBe(0);
      const report = JSON.parse(r.stdout.toString());
      expect(report.killed).toContain(pid);
      expect(report.removed).toContain(d);
      await waitGone(pid);
      expect(existsSync(d)).toBe(false);
    });

    it('HT-13 --owner-pid names the owner; --owner-pid of no process is refused (exit 2)', async () => {
      const root = serverTestDir();
      const keeper = spawnTracked(process.execPath, ['-e', 'setInterval(() => {}, 60000)']);
      const d = join(root, 'api');
      const r = await shimkit(['serve', '--dir', d, '--detach', '--owner-pid', String(keeper.pid)]);
      expect(r.code, r.stderr.toString()).toBe(0);
      expect(r.stderr.toString()).toContain(`when process ${keeper.pid} (its owner) exits`);
      const { pid } = JSON.parse(readFileSync(join(d, 'server.json'), 'utf8'));
      onTestFinished(() => {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {}
      });
      keeper.kill('SIGKILL');
      await waitGone(pid, 10_000);

      const bad = await shimkit([
        'serve',
        '--dir',
        join(root, 'b'),
        '--detach',
        '--owner-pid',
        '2147483646',
      ]);
      expect(bad.code).toBe(2);
      expect(bad.stderr.toString()).toMatch(/--owner-pid 2147483646: no such process runs/);
    });

    it('HT-13 the idle timeout is printed at start (30m by default) and ends a server that gets no request nor command', async () => {
      const root = serverTestDir();
      const { owner, pid } = await ownedServer(join(root, 'idle'), ['--idle-timeout', '1s']);
      await waitGone(pid, 10_000);
      expect(readFileSync(join(root, 'idle', 'server.log'), 'utf8')).toContain(
        'stopping: no request and no command came for 1s (--idle-timeout)',
      );
      expect(isAlive(owner.pid as number)).toBe(true);

      const d = join(root, 'default');
      const r = await shimkit(['serve', '--dir', d, '--detach']);
      const info = JSON.parse(readFileSync(join(d, 'server.json'), 'utf8'));
      onTestFinished(() => {
        try {
          process.kill(-info.pid, 'SIGKILL');
        } catch {}
      });
      expect(r.stderr.toString()).toBe(
        `shimkit serve: pid ${info.pid} serves ${info.url}; it stops with \`shimkit stop ${d}\`, when process ${process.pid} (its owner) exits, or after 30m without a request or a command (--idle-timeout).\n`,
      );
      const usage = await shimkit(['serve', '--dir', d, '--idle-timeout', '10']);
      expect(usage.code).toBe(2);
      expect(usage.stderr.toString()).toMatch(/--idle-timeout takes a duration with its unit/);
    });

    it('HT-13 the owner is the parent of serve --detach, seen through npx and npm exec (and their sh -c) and the subshell of a command substitution', () => {
      const procs: Record<number, { ppid: number; argv: string[] }> = {
        50: { ppid: 40, argv: ['sh', '-c', 'shimkit serve --dir d --detach'] },
        40: { ppid: 30, argv: ['npm exec shimkit serve --dir d --detach'] },
        30: { ppid: 1, argv: ['bash'] },
        60: { ppid: 30, argv: ['node', '/usr/lib/node_modules/npm/bin/npx-cli.js', 'shimkit'] },
        70: { ppid: 30, argv: ['bash', '-c', 'eval "$(shimkit serve --dir d --detach)"'] },
        // bats: the subshell of `ready=$(shimkit serve …)`, a fork of the test's bash.
        90: { ppid: 80, argv: ['bash', '/usr/lib/bats-core/bats-exec-test', 'x.bats'] },
        80: { ppid: 30, argv: ['bash', '/usr/lib/bats-core/bats-exec-test', 'x.bats'] },
      };
      const read = (path: string) => {
        const m = /^\/proc\/(\d+)\/(stat|cmdline)$/.exec(path);
        const p = procs[Number(m?.[1])];
        if (!p) return undefined;
        return m?.[2] === 'stat' ? `${m[1]} (x) S ${p.ppid} 1 1` : p.argv.join('\0');
      };
      expect(callerPid(50, read)).toBe(30);
      expect(callerPid(60, read)).toBe(30);
      expect(callerPid(70, read)).toBe(70);
      expect(callerPid(30, read)).toBe(30);
      expect(callerPid(90, read)).toBe(80);
    });
  },
);

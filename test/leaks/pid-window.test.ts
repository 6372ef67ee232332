// LK-01 LK-08: the scan reads the environ only of processes made since its
// scope opened (pids are handed out in turn, wrapping at pid_max), and falls
// back to reading every process's when the pid space may have turned over.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { run, sanitize } from '../../src/index.js';
import { readProcFile } from '../../src/internal/proc.js';
import {
  findCookieProcesses,
  newSince,
  type PidMark,
  type ProcReader,
  pidMark,
} from '../../src/leaks/scan.js';

const linux = process.platform === 'linux';
const mark = (lastPid: number, forks: number, pidMax = 32768): PidMark => ({
  lastPid,
  forks,
  pidMax,
});

describe('the scan reads only processes made since the scope opened', () => {
  it('LK-01 LK-08 the window of new pids: in order, across a wrap, and everything once the pid space may have turned over', () => {
    const plain = newSince(mark(100, 1000), mark(110, 1010));
    expect([100, 101, 110, 111, 5].map(plain)).toEqual([false, true, true, false, false]);
    // Wrapped at pid_max: the tail of the space and the start of it.
    const wrapped = newSince(mark(32760, 1000), mark(5, 1020));
    expect([32760, 32761, 32768, 1, 5, 6, 100].map(wrapped)).toEqual([
      false,
      true,
      true,
      true,
      true,
      false,
      false,
    ]);
    // Nothing forked: nothing can be new.
    expect(newSince(mark(100, 1000), mark(100, 1000))(100)).toBe(false);
    // As many forks as the pid space holds (less a margin): any pid can be new.
    const turned = newSince(mark(100, 1000), mark(101, 1000 + 32768));
    expect([5, 100, 30000].map(turned)).toEqual([true, true, true]);
    // pid_max changed meanwhile: any pid can be new.
    expect(newSince(mark(100, 1000), mark(101, 1001, 65536))(5)).toBe(true);
  });

  it.skipIf(!linux)(
    'LK-01 pidMark reads /proc: the last pid and the forks grow with each process started',
    async () => {
      const before = pidMark();
      expect(before).toBeDefined();
      expect(Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8'))).toBe(before?.pidMax);
      await run('true', []);
      const after = pidMark();
      expect(after?.forks).toBeGreaterThan(before?.forks ?? Number.POSITIVE_INFINITY);
    },
  );

  it.skipIf(!linux)(
    'LK-01 LK-08 with 40 processes from before the scope, the scan reads the environ of the new ones only, and finds the leak among them',
    async () => {
      const old = Array.from({ length: 40 }, () =>
        spawn('sleep', ['600'], { stdio: 'ignore', env: { PATH: process.env.PATH } }),
      );
      onTestFinished(() => {
        for (const child of old) child.kill('SIGKILL');
      });
      await vi.waitFor(() => expect(old.every((c) => c.pid !== undefined)).toBe(true));
      const leaks = sanitize.begin('window');
      onTestFinished(() => leaks.check().then(() => {}));
      const since = pidMark();
      const leak = spawn('sleep', ['600'], { stdio: 'ignore' }); // inherits the cookie
      onTestFinished(() => {
        leak.kill('SIGKILL');
      });
      const environs: string[] = [];
      const counting: ProcReader = {
        list: () => readdirProc(),
        read: (path) => {
          if (path.endsWith('/environ')) environs.push(path);
          return readProcFile(path);
        },
        readlink: () => undefined,
      };
      const found = findCookieProcesses(leaks.cookie, { reader: counting, since });
      expect(found?.map((p) => p.pid)).toEqual([leak.pid]);
      const oldPaths = new Set(old.map((c) => `/proc/${c.pid}/environ`));
      expect(environs.filter((path) => oldPaths.has(path))).toEqual([]);
      expect(environs).toContain(`/proc/${leak.pid}/environ`);
      // Without the mark, every process is read, the 40 among them.
      environs.length = 0;
      findCookieProcesses(leaks.cookie, { reader: counting });
      expect(environs.filter((path) => oldPaths.has(path))).toHaveLength(40);
      const report = await leaks.check();
      expect(report.processes.map((p) => p.pid)).toEqual([leak.pid]);
    },
  );
});

function readdirProc(): string[] {
  return readdirSync('/proc');
}

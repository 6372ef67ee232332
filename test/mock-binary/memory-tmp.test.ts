// PERF-07 PERF-09: a mock whose caller chose no temp dir goes on a tmpfs
// (its shell-served calls create two files each, cheap there), only where
// that tmpfs has room, lets shims run, and is this user's when private.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { createMockBinary } from '../../src/index.js';
import { MEMORY_TMP_MIN_FREE, memoryTmpDir } from '../../src/internal/memory-tmp.js';
import { privateMountArgs, runCommand, testDir } from '../helpers/index.js';

const REPO = new URL('../..', import.meta.url).pathname;
const TMPFS = 0x01021994;
const shmUsable = (() => {
  try {
    const fs = statfsSync('/dev/shm');
    return fs.type === TMPFS && fs.bavail * fs.bsize >= MEMORY_TMP_MIN_FREE;
  } catch {
    return false;
  }
})();
if (!shmUsable) {
  console.warn(
    'SKIPPED the /dev/shm placement test: /dev/shm is not a tmpfs with 1 GiB free here.',
  );
}
const mountNamespace = privateMountArgs();
if (mountNamespace === undefined) {
  console.warn(
    'SKIPPED the noexec tmpfs test: `unshare -m` with a tmpfs mount needs root or user namespaces (CI runs it as root).',
  );
}

describe('PERF-07 where a mock goes when the caller chose no temp dir', () => {
  it('PERF-07 only on Linux, only with TMPDIR unset, and not with SHIMKIT_TMPFS=0', () => {
    const candidates = ['/dev/shm'];
    expect(memoryTmpDir({ platform: 'darwin', env: {}, candidates })).toBeUndefined();
    expect(memoryTmpDir({ platform: 'win32', env: {}, candidates })).toBeUndefined();
    expect(
      memoryTmpDir({ platform: 'linux', env: { TMPDIR: '/tmp' }, candidates }),
    ).toBeUndefined();
    expect(
      memoryTmpDir({ platform: 'linux', env: { SHIMKIT_TMPFS: '0' }, candidates }),
    ).toBeUndefined();
  });

  it('PERF-07 a dir that is no tmpfs, or is missing, is passed over', () => {
    const disk = testDir();
    const linux = { platform: 'linux' as const, env: {} };
    if (statfsSync(disk).type !== TMPFS) {
      expect(memoryTmpDir({ ...linux, candidates: [disk] })).toBeUndefined();
    }
    expect(memoryTmpDir({ ...linux, candidates: [join(disk, 'missing')] })).toBeUndefined();
  });

  it.skipIf(!shmUsable)(
    "PERF-07 SEC-03 $XDG_RUNTIME_DIR is used when it is this user's and 0700; open to others, /dev/shm is used instead",
    () => {
      const runtime = mkdtempSync('/dev/shm/shimkit-test-runtime-');
      onTestFinished(() => rmSync(runtime, { recursive: true, force: true }));
      const env = { XDG_RUNTIME_DIR: runtime };
      chmodSync(runtime, 0o700);
      expect(memoryTmpDir({ platform: 'linux', env })).toBe(runtime);
      const open = `${runtime}/open`;
      mkdirSync(open, { mode: 0o755 });
      chmodSync(open, 0o755);
      expect(memoryTmpDir({ platform: 'linux', env: { XDG_RUNTIME_DIR: open } })).toBe('/dev/shm');
      // A relative one is not a place: /dev/shm.
      expect(memoryTmpDir({ platform: 'linux', env: { XDG_RUNTIME_DIR: 'run/user' } })).toBe(
        '/dev/shm',
      );
    },
  );

  it.skipIf(!shmUsable)(
    'PERF-07 SEC-01 with TMPDIR unset, a mock goes in /dev/shm, 0700, its calls work, and dispose() removes it',
    async () => {
      vi.stubEnv('TMPDIR', '');
      vi.stubEnv('XDG_RUNTIME_DIR', '');
      vi.stubEnv('SHIMKIT_TMPFS', '');
      try {
        const git = createMockBinary('git', { responses: [{ stdout: 'on tmpfs\n' }] });
        expect(git.path.startsWith('/dev/shm/shimkit-')).toBe(true);
        const root = git.path.slice(0, git.path.indexOf('/bin/'));
        const mode = execFileSync('stat', ['-c', '%a', root]).toString().trim();
        expect(mode).toBe('700');
        const r = await runCommand(git.path, ['status']);
        expect([r.code, r.stdout.toString()]).toEqual([0, 'on tmpfs\n']);
        expect(git.calls()).toHaveLength(1);
        await git.dispose();
        const gone = await runCommand('test', ['-e', root]);
        expect(gone.code).toBe(1);
      } finally {
        vi.unstubAllEnvs();
      }
    },
  );

  it.skipIf(mountNamespace === undefined)(
    'PERF-07 a tmpfs mounted noexec is passed over (the shims could not run there); one that allows them is used',
    async () => {
      const dir = testDir();
      const [noexec, exec] = [join(dir, 'noexec'), join(dir, 'exec')];
      mkdirSync(noexec, { mode: 0o700 });
      mkdirSync(exec, { mode: 0o700 });
      const script = `
        const { createMockBinary } = require(${JSON.stringify(join(REPO, 'dist', 'index.cjs'))});
        const { execFileSync } = require('node:child_process');
        const where = [];
        for (const runtime of process.argv.slice(1)) {
          process.env.XDG_RUNTIME_DIR = runtime;
          const git = createMockBinary('git', { responses: [{ stdout: 'ran\\n' }] });
          where.push([git.path, execFileSync(git.path).toString()]);
          git.dispose();
        }
        console.log(JSON.stringify(where));`;
      const mounts = [
        `mount -t tmpfs -o noexec,mode=0700,size=2g tmpfs '${noexec}'`,
        `mount -t tmpfs -o mode=0700,size=2g tmpfs '${exec}'`,
      ].join(' && ');
      const r = await runCommand(
        'unshare',
        [
          ...(mountNamespace as string[]),
          'sh',
          '-c',
          `${mounts} && exec "$0" -e "$1" "$2" "$3"`,
          process.execPath,
          script,
          noexec,
          exec,
        ],
        { env: { ...process.env, TMPDIR: '', SHIMKIT_TMPFS: '' } },
      );
      expect(r.code, r.stderr.toString()).toBe(0);
      const [first, second] = JSON.parse(r.stdout.toString()) as [string, string][];
      // noexec: another tmpfs (or the disk), not that one; and the call still runs.
      expect(first?.[0].startsWith(`${noexec}/`)).toBe(false);
      expect(first?.[1]).toBe('ran\n');
      expect(second?.[0].startsWith(`${exec}/shimkit-`)).toBe(true);
      expect(second?.[1]).toBe('ran\n');
    },
  );
});

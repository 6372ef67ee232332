import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { sanitize } from '../../src/index.js';
import { hostTmpdir } from '../../src/internal/host-tmp.js';
import { leftIn, removeScopeTmp, WALK_LIMIT } from '../../src/leaks/tmp.js';
import { testDir } from '../helpers/index.js';
import { inSystemTmpdir } from '../helpers/leaks.js';

const posix = process.platform !== 'win32';

/** A name with a newline, a backslash and a byte that is not UTF-8, and one of 255 bytes. */
const ODD = Buffer.concat([Buffer.from('new\nline\\'), Buffer.from([0xfe])]);
const LONG = 'L'.repeat(255);

/** A scope dir in a fresh test dir, filled with files, nested dirs, odd names and a symlink out of it. */
function filledScope(): { base: string; scope: string; outside: string } {
  const base = testDir();
  const scope = join(base, 'scope');
  mkdirSync(scope, { mode: 0o700 });
  const outside = join(base, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'keep.txt'), 'precious');
  writeFileSync(join(scope, 'a.txt'), 'hello');
  mkdirSync(join(scope, 'nested', 'deeper'), { recursive: true });
  writeFileSync(join(scope, 'nested', 'one'), '1');
  writeFileSync(join(scope, 'nested', 'deeper', 'two'), '22');
  symlinkSync(outside, join(scope, 'link-out'));
  writeFileSync(Buffer.concat([Buffer.from(`${scope}/`), ODD]), 'x');
  mkdirSync(join(scope, LONG));
  writeFileSync(join(scope, LONG, LONG), '');
  return { base, scope, outside };
}

// The sweep, the registry or another user work in the system temp dir itself:
// the leak sanitizer's per-test TMPDIR is off here (inSystemTmpdir).
describe('leak sanitizer: a scope temp dir', inSystemTmpdir, () => {
  it('LK-03 what is left is listed by name with kind, size and count below; symlinks are not followed; odd names are shown escaped', () => {
    const { scope } = filledScope();
    if (posix) expect(spawnSync('mkfifo', [join(scope, 'fifo')]).status).toBe(0);
    const left = leftIn(scope);
    expect(left.complete).toBe(true);
    expect(left.total).toBe(posix ? 10 : 9); // 6 top-level (5 without a fifo), 4 below
    expect(left.entries).toEqual([
      { path: LONG, kind: 'dir', inside: 1 },
      { path: 'a.txt', kind: 'file', bytes: 5 },
      ...(posix ? [{ path: 'fifo', kind: 'fifo' }] : []),
      { path: 'link-out', kind: 'symlink' },
      { path: 'nested', kind: 'dir', inside: 3 },
      { path: 'new\\x0aline\\\\\\xfe', kind: 'file', bytes: 1 },
    ]);
    expect(leftIn(scope, 2).entries.map((e) => e.path)).toEqual([LONG, 'a.txt']);
    expect(leftIn(scope, 2).total).toBe(left.total);
  });

  it.skipIf(!posix)('LK-03 a unix socket left in the dir is listed as one', async () => {
    const scope = testDir();
    const server = createServer();
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    await new Promise<void>((resolve) => server.listen(join(scope, 's.sock'), resolve));
    expect(leftIn(scope)).toEqual({
      entries: [{ path: 's.sock', kind: 'socket' }],
      total: 1,
      complete: true,
    });
  });

  it('LK-03 an empty or missing dir has nothing left; a walk stops at its bound and says so', () => {
    const scope = testDir();
    expect(leftIn(scope)).toEqual({ entries: [], total: 0, complete: true });
    expect(leftIn(join(scope, 'missing'))).toEqual({ entries: [], total: 0, complete: true });
    mkdirSync(join(scope, 'd'));
    for (let i = 0; i <= WALK_LIMIT; i += 1) writeFileSync(join(scope, 'd', String(i)), '');
    const left = leftIn(scope);
    expect(left).toEqual({
      entries: [{ path: 'd', kind: 'dir', inside: WALK_LIMIT - 1 }],
      total: WALK_LIMIT,
      complete: false,
    });
  });

  it('LK-03 removal takes the whole dir, odd names and read-only dirs included, and never follows a symlink out of it', () => {
    const { base, scope, outside } = filledScope();
    mkdirSync(join(scope, 'ro', 'inner'), { recursive: true });
    writeFileSync(join(scope, 'ro', 'inner', 'f'), 'f');
    chmodSync(join(scope, 'ro', 'inner'), 0o500);
    chmodSync(join(scope, 'ro'), 0o500);
    expect(removeScopeTmp(scope)).toBe(true);
    expect(existsSync(scope)).toBe(false);
    expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('precious');
    expect(readdirSync(base)).toEqual(['outside']); // no trash left next to it
    expect(removeScopeTmp(scope)).toBe(false);
  });

  it.skipIf(!posix)(
    'LK-03 removal goes on while another process deletes entries in it at the same time',
    async () => {
      const { base, scope } = filledScope();
      for (let d = 0; d < 20; d += 1) {
        mkdirSync(join(scope, 'many', String(d)), { recursive: true });
        for (let f = 0; f < 100; f += 1)
          writeFileSync(join(scope, 'many', String(d), String(f)), '');
      }
      // The child deletes from inside (its cwd follows the dir when it is renamed away).
      const child = spawn('sh', ['-c', 'echo go; exec rm -rf ./*'], {
        cwd: join(scope, 'many'),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      onTestFinished(() => {
        child.kill('SIGKILL');
      });
      await new Promise((resolve) => child.stdout.once('data', resolve));
      expect(removeScopeTmp(scope)).toBe(true);
      await new Promise((resolve) => child.once('close', resolve));
      expect(existsSync(scope)).toBe(false);
      expect(readdirSync(base)).toEqual(['outside']);
    },
  );

  it.skipIf(!posix || process.getuid?.() !== 0)(
    'LK-03 for a user other than root, a read-only dir in the tree is made writable to be removed (run as nobody)',
    async () => {
      const { build, stop } = await import('esbuild');
      const base = testDir();
      chmodSync(base, 0o755);
      const bundle = join(base, 'tmp.cjs');
      await build({
        entryPoints: [fileURLToPath(new URL('../../src/leaks/tmp.ts', import.meta.url))],
        bundle: true,
        platform: 'node',
        format: 'cjs',
        outfile: bundle,
        logLevel: 'silent',
      });
      await stop(); // esbuild's service process would outlive the test (the sanitizer says so)
      const work = join(base, 'work');
      mkdirSync(work);
      chownSync(work, 65534, 65534);
      const script = `
        const { removeScopeTmp, leftIn } = require(${JSON.stringify(bundle)});
        const fs = require('node:fs');
        const scope = fs.mkdtempSync(${JSON.stringify(work)} + '/scope-');
        fs.mkdirSync(scope + '/ro/inner', { recursive: true });
        fs.writeFileSync(scope + '/ro/inner/f', 'f');
        fs.symlinkSync('/etc', scope + '/ro/etc');
        fs.chmodSync(scope + '/ro/inner', 0o500);
        fs.chmodSync(scope + '/ro', 0o500);
        let plain;
        try { fs.rmSync(scope, { recursive: true, force: true }); } catch (e) { plain = e.code; }
        const left = leftIn(scope).total;
        console.log(JSON.stringify({ plain, left, removed: removeScopeTmp(scope), gone: !fs.existsSync(scope), work: fs.readdirSync(${JSON.stringify(work)}) }));
      `;
      const etcMode = statSync('/etc').mode;
      const result = spawnSync(process.execPath, ['-e', script], {
        uid: 65534,
        gid: 65534,
        encoding: 'utf8',
      });
      expect(result.stderr).toBe('');
      expect(JSON.parse(result.stdout)).toEqual({
        plain: 'EACCES',
        left: 4,
        removed: true,
        gone: true,
        work: [],
      });
      expect(statSync('/etc').mode).toBe(etcMode); // the symlink was not chmodded through
    },
  );
});

describe('leak sanitizer: the host temp dir', () => {
  it('LK-03 SHIMKIT_HOST_TMPDIR holds while TMPDIR is a scope dir in it; a TMPDIR a test chose for a child wins', () => {
    const host = testDir();
    const other = testDir();
    vi.stubEnv('SHIMKIT_HOST_TMPDIR', host);
    try {
      vi.stubEnv('TMPDIR', join(host, 'shimkit-tmp-AbC123'));
      expect(hostTmpdir()).toBe(host);
      vi.stubEnv('TMPDIR', join(host, 'mine')); // a child given a temp dir of its own
      expect(hostTmpdir()).toBe(join(host, 'mine'));
      vi.stubEnv('TMPDIR', join(other, 'shimkit-tmp-AbC123')); // a scope dir under another host
      expect(hostTmpdir()).toBe(join(other, 'shimkit-tmp-AbC123'));
      vi.stubEnv('SHIMKIT_HOST_TMPDIR', '');
      vi.stubEnv('TMPDIR', join(host, 'shimkit-tmp-AbC123'));
      expect(hostTmpdir()).toBe(join(host, 'shimkit-tmp-AbC123'));
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("LK-03 a scope's TMPDIR is private (0700 under any umask) in the host temp dir; an empty one is kept for the next scope, one that held files is removed", async () => {
    const previous = process.umask(0o277);
    let a: ReturnType<typeof sanitize.begin>;
    try {
      a = sanitize.begin('tmp a', { fds: false });
    } finally {
      process.umask(previous);
    }
    const first = process.env.TMPDIR as string;
    expect(first.startsWith(join(hostTmpdir(), 'shimkit-tmp-'))).toBe(true);
    expect(hostTmpdir()).not.toBe(first); // the host's, not the scope's
    if (posix) expect(statSync(first).mode & 0o777).toBe(0o700);
    expect((await a.check()).files).toEqual([]);
    expect(existsSync(first)).toBe(true); // empty: kept for the next scope

    const b = sanitize.begin('tmp b', { fds: false });
    expect(process.env.TMPDIR).toBe(first);
    writeFileSync(join(first, 'left.txt'), 'x');
    const rb = await b.check();
    expect(rb.files.map((f) => f.path)).toEqual(['left.txt']);
    expect(existsSync(first)).toBe(false);

    const c = sanitize.begin('tmp c', { fds: false });
    const third = process.env.TMPDIR as string;
    expect(third).not.toBe(first);
    await c.check();
  });
});

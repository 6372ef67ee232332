// SEC-03: nothing shimkit creates or reuses can be subverted by another local
// user. The tests that need another user chown to `shimkit-other` and so run
// only as root (`useradd -M shimkit-other` first); the owner check itself is
// also driven with an injected uid and platform, which needs no root.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import {
  createMockBinary,
  createMockBinDir,
  openMockBinDir,
  ShimkitError,
} from '../../src/index.js';
import { claimRoot } from '../../src/mock-binary/persist.js';
import { shimkit, shimkitOk } from '../cli/helpers.js';
import { runCommand, testDir } from '../helpers/index.js';
import { inSystemTmpdir } from '../helpers/leaks.js';

const OTHER = 'shimkit-other';

/** The uid of `shimkit-other`, when this process is root and the user exists. */
function otherUid(): number | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    return Number(execFileSync('id', ['-u', OTHER], { encoding: 'utf8' }).trim());
  } catch {
    return undefined;
  }
}
const other = otherUid();
const asRoot = it.skipIf(other === undefined);
const whyRoot = `needs root and a user ${OTHER} (useradd -M ${OTHER}) to chown to`;

/** An empty dir that another user made (as they could in a shared dir such as /tmp). */
function othersDir(): string {
  const dir = join(testDir(), 'mocks');
  mkdirSync(dir, { mode: 0o777 });
  chownSync(dir, other as number, other as number);
  return dir;
}

const belongs = (dir: string) =>
  `, ${dir}, belongs to uid ${other} (${OTHER}), not to this process's user (uid 0)`;

describe('pre-made dirs', () => {
  if (other === undefined) it.skip(`SEC-03 (the other-user cases: ${whyRoot})`, () => {});

  asRoot(
    'SEC-03 createMockBinDir({ dir }) refuses an empty dir another user owns, naming the owner',
    () => {
      const dir = othersDir();
      expect(() => createMockBinDir({ dir })).toThrow(ShimkitError);
      expect(() => createMockBinDir({ dir })).toThrow(
        `The \`dir\` of createMockBinDir()${belongs(dir)}`,
      );
      expect(() => createMockBinDir({ dir })).toThrow(
        'Pass a dir of your own, or a path that does not exist yet',
      );
      expect(readdirSync(dir)).toEqual([]); // no bin/ for its owner to swap
    },
  );

  asRoot(
    'SEC-03 shimkit mock --dir refuses an empty dir another user owns, and makes nothing in it',
    async () => {
      const dir = othersDir();
      const r = await shimkit(['mock', 'git', '--dir', dir]);
      expect(r.code).not.toBe(0);
      expect(r.stdout.toString()).toBe(''); // no PATH line to eval
      expect(r.stderr.toString()).toContain(belongs(dir));
      expect(readdirSync(dir)).toEqual([]);
    },
  );

  asRoot(
    'SEC-03 a mock dir is not reused when another user owns it or its bin/ (shimkit mock, openMockBinDir)',
    async () => {
      const dir = join(testDir(), 'mocks');
      await shimkitOk(['mock', 'git', '--dir', dir]);
      chownSync(join(dir, 'bin'), other as number, other as number);
      const r = await shimkit(['mock', 'docker', '--dir', dir]);
      expect(r.code).not.toBe(0);
      expect(r.stderr.toString()).toContain(
        `A dir in the mock dir ${dir}, ${join(dir, 'bin')}, belongs to uid ${other} (${OTHER})`,
      );
      expect(existsSync(join(dir, 'bin', 'docker'))).toBe(false);
      chownSync(join(dir, 'bin'), 0, 0);
      chownSync(dir, other as number, other as number);
      expect(() => openMockBinDir(dir)).toThrow(`The mock dir${belongs(dir)}`);
      expect((await shimkit(['enqueue', dir, 'git', '--stdout', 'x'])).stderr.toString()).toContain(
        belongs(dir),
      );
    },
  );

  it('SEC-03 a mock dir, or its bin/, that its group or every user may write to is not reused', async () => {
    const dir = join(testDir(), 'mocks');
    await shimkitOk(['mock', 'git', '--dir', dir]);
    chmodSync(dir, 0o777);
    expect(() => openMockBinDir(dir)).toThrow(
      `The mock dir, ${dir}, is writable by every user (mode 0777): whoever can write there can swap a shim, and so what runs as this user. Make it private again (chmod 700 ${dir}), or make a new mock dir.`,
    );
    chmodSync(dir, 0o700);
    chmodSync(join(dir, 'bin'), 0o770);
    const r = await shimkit(['mock', 'docker', '--dir', dir]);
    expect(r.code).not.toBe(0);
    expect(r.stderr.toString()).toContain(
      `${join(dir, 'bin')}, is writable by its group (mode 0770)`,
    );
    expect(existsSync(join(dir, 'bin', 'docker'))).toBe(false);
    chmodSync(join(dir, 'bin'), 0o700);
    expect(openMockBinDir(dir).dir).toBe(join(dir, 'bin'));
  });

  it('SEC-03 a --dir that is a symbolic link is refused and says where it points; a dangling one says it does not exist', async () => {
    const parent = testDir();
    const real = join(parent, 'real');
    mkdirSync(real);
    const link = join(parent, 'link');
    symlinkSync(real, link);
    expect(() => createMockBinDir({ dir: link })).toThrow(
      `The \`dir\` of createMockBinDir(), ${link}, is a symbolic link to ${real}: shimkit does not follow a link to a dir it puts shims or state in`,
    );
    expect(() => createMockBinDir({ dir: link })).toThrow('Pass the real dir (its realpath)');
    const dangling = join(parent, 'dangling');
    symlinkSync(join(parent, 'gone'), dangling);
    const r = await shimkit(['mock', 'git', '--dir', dangling]);
    expect(r.code).not.toBe(0);
    expect(r.stderr.toString()).toContain(
      `${dangling}, is a symbolic link to ${join(parent, 'gone')}, which does not exist`,
    );
    expect(existsSync(join(parent, 'gone'))).toBe(false);
    expect(readdirSync(real)).toEqual([]);
  });

  it('SEC-03 the owner check compares st.uid with the caller uid, names an unknown uid plainly, and is skipped on Windows', () => {
    const mine = process.getuid?.() ?? 0;
    const host = (platform: NodeJS.Platform) => ({
      platform,
      uid: mine + 4242, // as if another user made the dir
      passwd: () => 'root:x:0:0::/root:/bin/sh\n',
    });
    const dir = join(testDir(), 'mocks');
    mkdirSync(dir);
    expect(() => claimRoot(dir, true, 'createMockBinDir()', host('linux'))).toThrow(
      `The \`dir\` of createMockBinDir(), ${dir}, belongs to uid ${mine}${mine === 0 ? ' (root)' : ''}, not to this process's user (uid ${mine + 4242})`,
    );
    const root = claimRoot(dir, true, 'createMockBinDir()', host('win32')); // no uids to compare
    expect(root.path).toBe(dir);
    root.remove();
  });
});

// The sweep, the registry or another user work in the system temp dir itself:
// the leak sanitizer's per-test TMPDIR is off here (inSystemTmpdir).
describe('temp files and the registry', inSystemTmpdir, () => {
  it('SEC-03 the cassette is written 0600 through an exclusive, randomly named temp file: a planted <path>.<pid>.tmp link is not followed', async () => {
    const dir = testDir();
    const path = join(dir, 'gh.cassette.json');
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'precious\n');
    symlinkSync(victim, `${path}.${process.pid}.tmp`);
    const gh = createMockBinary('gh', { cassette: { path, mode: 'record' } });
    await runCommand('gh', ['--version'], { env: gh.env({ PATH: `${gh.dir}:/nonexistent` }) });
    await gh.dispose();
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(lstatSync(path).isFile()).toBe(true);
    // 0600 as every file shimkit writes (what it holds came from the program under test).
    expect(lstatSync(path).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ version: 1, command: 'gh' });
  });

  it('SEC-03 a shim is written through an exclusive, randomly named temp file: a planted .<name>.<pid>.tmp link is not followed', async () => {
    await using bin = createMockBinDir();
    const victim = join(testDir(), 'victim');
    writeFileSync(victim, 'precious\n', { mode: 0o600 });
    symlinkSync(victim, join(bin.dir, `.git.${process.pid}.tmp`));
    const git = bin.mock('git', { responses: [{ stdout: 'ok' }] });
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(lstatSync(victim).mode & 0o777).toBe(0o600);
    expect(lstatSync(git.path).isFile()).toBe(true);
    expect((await runCommand(git.path)).stdout.toString()).toBe('ok');
  });

  asRoot(
    'SEC-03 a leftover registry dir another user made first is not written to; a warning names its owner',
    async () => {
      const tmp = testDir(); // this test's os.tmpdir(), where registries go
      const elsewhere = testDir(); // a temp parent outside it: its roots are listed in the registry
      vi.stubEnv('TMPDIR', tmp);
      vi.stubEnv('SHIMKIT_HOST_TMPDIR', ''); // the registry follows TMPDIR, not a sanitizer's host dir
      vi.resetModules(); // a fresh registry module, that has not picked its dir yet
      try {
        const { registryName } = await import('../../src/internal/leftovers/names.js');
        const { processOwner, threadOwner } = await import('../../src/internal/leftovers/owner.js');
        const { createTempDir } = await import('../../src/internal/temp-dir.js');
        const registry = join(tmp, registryName(threadOwner() ?? processOwner()));
        mkdirSync(registry, { mode: 0o777 });
        chownSync(registry, other as number, other as number);
        const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
        const root = createTempDir('shimkit', elsewhere);
        createTempDir('shimkit', elsewhere).remove(); // warned once per dir
        expect(readdirSync(registry)).toEqual([]);
        expect(warn).toHaveBeenCalledTimes(1);
        expect(String(warn.mock.calls[0]?.[0])).toContain(
          `The leftover registry dir, ${registry}, belongs to uid ${other} (${OTHER})`,
        );
        expect(String(warn.mock.calls[0]?.[0])).toContain('remove it.');
        root.remove();
        warn.mockRestore();
      } finally {
        vi.unstubAllEnvs();
        vi.resetModules();
      }
    },
  );
});

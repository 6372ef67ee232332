import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createMockBinDir, InvalidOptionError, openMockBinDir, ShimkitError } from 'shimkit';
import { describe, expect, it } from 'vitest';
import { runCommand, testDir } from '../helpers/index.js';

const REPO = new URL('../..', import.meta.url).pathname;

/** Run a snippet using the built package in a process of its own. */
async function inProcess(code: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  const r = await runCommand(process.execPath, ['--input-type=module', '-e', code], {
    cwd: REPO,
    env: { ...process.env, ...env },
  });
  expect(r.stderr.toString()).toBe('');
  expect(r.code).toBe(0);
  return r.stdout.toString();
}

describe('bin dirs that outlive their process (dir, keep, openMockBinDir)', () => {
  it('CLI-01 a dir made with { dir, keep: true } survives its process; another reopens it by dir, serves, records and disposes it', async () => {
    const dir = join(testDir(), 'mocks');
    await inProcess(
      `import { createMockBinDir } from 'shimkit';
       const bin = createMockBinDir({ dir: ${JSON.stringify(dir)}, keep: true });
       bin.mock('git', { strict: true }).enqueue({ stdout: 'one\\n' });`,
    );
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const bin = openMockBinDir(dir);
    const git = bin.get('git');
    expect(bin.dir).toBe(join(dir, 'bin'));
    expect(git.path).toBe(join(dir, 'bin', 'git'));
    git.enqueue({ stdout: 'two\n' });
    expect((await runCommand(git.path, ['a'])).stdout.toString()).toBe('one\n');
    expect((await runCommand(git.path, ['b'])).stdout.toString()).toBe('two\n');
    expect(
      openMockBinDir(dir)
        .get('git')
        .calls()
        .map((c) => c.argv),
    ).toEqual([['a'], ['b']]);
    git.assertDone();
    // strict came back with the mock: a call past the queue fails.
    expect((await runCommand(git.path, ['c'])).code).not.toBe(0);
    await expect(bin.dispose()).rejects.toThrow(/mock "git": .*had no response/s);
    expect(existsSync(dir)).toBe(false);
  });

  it('CLI-01 { dir } without keep goes when its process exits; { keep: true } alone keeps a temp dir', async () => {
    const parent = testDir();
    const out = await inProcess(
      `import { createMockBinDir } from 'shimkit';
       const a = createMockBinDir({ dir: ${JSON.stringify(join(parent, 'a'))} });
       const b = createMockBinDir({ keep: true, tmpDir: ${JSON.stringify(parent)} });
       a.mock('git'); b.mock('git');
       console.log(b.root);`,
    );
    expect(existsSync(join(parent, 'a'))).toBe(false);
    const kept = out.trim();
    expect(existsSync(join(kept, 'shimkit.json'))).toBe(true);
    await openMockBinDir(kept).dispose();
    expect(existsSync(kept)).toBe(false);
  });

  it('CLI-01 clear errors: a dir that is not a mock dir, a name not mocked there, a used or taken dir', () => {
    const base = testDir();
    const expectCode = (fn: () => unknown, code: string, message: RegExp) => {
      try {
        fn();
      } catch (error) {
        expect(error).toBeInstanceOf(ShimkitError);
        expect((error as ShimkitError).code).toBe(code);
        expect((error as Error).message).toMatch(message);
        return;
      }
      throw new Error('did not throw');
    };
    expectCode(
      () => openMockBinDir(join(base, 'nope')),
      'ERR_SHIMKIT_NOT_MOCK_DIR',
      /does not exist\)\. Make one first/,
    );
    expectCode(() => openMockBinDir(base), 'ERR_SHIMKIT_NOT_MOCK_DIR', /has no shimkit\.json/);
    writeFileSync(join(base, 'file'), '');
    expectCode(
      () => createMockBinDir({ dir: base }),
      'ERR_SHIMKIT_INVALID_OPTION',
      /is not empty \(file\)/,
    );
    expectCode(
      () => createMockBinDir({ dir: join(base, 'file') }),
      'ERR_SHIMKIT_INVALID_OPTION',
      /not a dir/,
    );
    expectCode(
      () => createMockBinDir({ dir: join(base, 'x', 'y') }),
      'ERR_SHIMKIT_INVALID_OPTION',
      /parent dir does not exist/,
    );
    expect(() => createMockBinDir({ dir: join(base, 'd'), tmpDir: base })).toThrow(
      InvalidOptionError,
    );
    const dir = join(base, 'm');
    const bin = createMockBinDir({ dir, keep: true });
    bin.mock('git');
    expectCode(
      () => createMockBinDir({ dir }),
      'ERR_SHIMKIT_INVALID_OPTION',
      /is a shimkit mock dir already: reopen it/,
    );
    expectCode(
      () => openMockBinDir(dir).get('gti'),
      'ERR_SHIMKIT_NOT_MOCK_DIR',
      /no mock named "gti"; did you mean "git"\? Mocks there: git\./,
    );
    expectCode(
      () => openMockBinDir(dir).mock('git'),
      'ERR_SHIMKIT_INVALID_OPTION',
      /already has a mock named "git"/,
    );
    mkdirSync(join(base, 'empty'));
    const fresh = createMockBinDir({ dir: join(base, 'empty') }); // an empty dir is taken (and made 0700)
    expect(statSync(fresh.root).mode & 0o777).toBe(0o700);
    fresh.disposeSync();
    bin.disposeSync();
  });

  it('CLI-01 disposing one reopened mock removes it from the dir for every later process', async () => {
    const dir = join(testDir(), 'mocks');
    const bin = createMockBinDir({ dir, keep: true });
    bin.mock('git');
    bin.mock('docker');
    await openMockBinDir(dir).get('docker').dispose();
    expect(
      openMockBinDir(dir)
        .mocks()
        .map((m) => m.name),
    ).toEqual(['git']);
    expect(existsSync(join(dir, 'bin', 'docker'))).toBe(false);
    bin.disposeSync();
  });
});

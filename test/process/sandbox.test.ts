import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { createMockBinary, DisposedError, InvalidOptionError } from '../../src/index.js';
import { createTempDir } from '../../src/internal/temp-dir.js';
import { GitSetupError, SANDBOX_GIT_IDENTITY } from '../../src/process/git.js';
import { createSandbox, type SandboxOptions } from '../../src/process/sandbox.js';
import { runCommand, testDir } from '../helpers/index.js';
import { sandboxInChild } from '../helpers/sandbox.js';

async function git(args: string[], env: Record<string, string>, cwd: string): Promise<string> {
  const result = await runCommand('git', args, { env, cwd });
  expect(result.code, result.stderr.toString()).toBe(0);
  return result.stdout.toString().trim();
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('git: true', () => {
  it('SP-02 makes a repo with one commit by the fixed author, whatever the host git config and hooks', async () => {
    // A hostile host: its global config names another author, signs commits,
    // sets another default branch and runs a pre-commit hook that fails and
    // leaves a marker; GIT_DIR points elsewhere.
    const host = testDir();
    const hooks = join(host, 'hooks');
    const marker = join(host, 'hook-ran');
    mkdirSync(hooks);
    writeFileSync(join(hooks, 'pre-commit'), `#!/bin/sh\ntouch '${marker}'\nexit 1\n`);
    chmodSync(join(hooks, 'pre-commit'), 0o755);
    const hostGitConfig = [
      '[user]\n\tname = Host Person\n\temail = host@example.com',
      `[core]\n\thooksPath = ${hooks}`,
      '[commit]\n\tgpgsign = true',
      '[init]\n\tdefaultBranch = trunk',
    ].join('\n');
    writeFileSync(join(host, '.gitconfig'), `${hostGitConfig}\n`);
    mkdirSync(join(host, '.config', 'git'), { recursive: true });
    writeFileSync(join(host, '.config', 'git', 'config'), `${hostGitConfig}\n`);

    const made = await sandboxInChild(
      {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: host,
        XDG_CONFIG_HOME: join(host, '.config'),
        GIT_DIR: join(host, 'elsewhere.git'),
        GIT_AUTHOR_NAME: 'Host Person',
      },
      testDir(),
      { git: true },
    );

    const { name, email } = SANDBOX_GIT_IDENTITY;
    const log = (format: string) => git(['log', `--format=${format}`], made.env, made.workspace);
    expect(await log('%an <%ae>')).toBe(`${name} <${email}>`);
    expect(await log('%cn <%ce>')).toBe(`${name} <${email}>`);
    expect(await log('%aI %cI')).toBe('2000-01-01T00:00:00+00:00 2000-01-01T00:00:00+00:00');
    expect(await log('%s')).toBe('initial commit');
    expect(await git(['rev-list', '--count', 'HEAD'], made.env, made.workspace)).toBe('1');
    expect(await git(['branch', '--show-current'], made.env, made.workspace)).toBe('main');
    expect(await git(['status', '--porcelain'], made.env, made.workspace)).toBe('');
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(join(host, 'elsewhere.git'))).toBe(false);
  });

  it('SP-02 the program under test can commit in the sandbox repo, as the sandbox identity', async () => {
    await using sb = createSandbox({ git: true, tmpDir: testDir() });
    await git(['commit', '--allow-empty', '-m', 'second'], sb.env(), sb.workspace);
    const { name, email } = SANDBOX_GIT_IDENTITY;
    expect(await git(['log', '-1', '--format=%an <%ae> %s'], sb.env(), sb.workspace)).toBe(
      `${name} <${email}> second`,
    );
    expect(await git(['rev-list', '--count', 'HEAD'], sb.env(), sb.workspace)).toBe('2');
  });

  it('SP-02 the commit is the same on every machine', async () => {
    await using a = createSandbox({ git: true, tmpDir: testDir() });
    await using b = createSandbox({ git: true, tmpDir: testDir() });
    const head = (sb: typeof a) => git(['rev-parse', 'HEAD'], sb.env(), sb.workspace);
    expect(await head(a)).toMatch(/^[0-9a-f]{40}$/);
    expect(await head(a)).toBe(await head(b));
  });

  it('SP-02 without git on PATH, createSandbox throws naming the workspace and what to do, and leaves nothing behind', () => {
    const parent = testDir();
    const emptyPath = testDir();
    let error: unknown;
    try {
      createSandbox({ git: true, tmpDir: parent, env: { PATH: emptyPath } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(GitSetupError);
    expect((error as GitSetupError).code).toBe('ERR_SHIMKIT_GIT_SETUP');
    expect((error as Error).message).toMatch(
      new RegExp(
        `^Could not make the sandbox workspace ${escapeRegExp(parent)}/shimkit-sandbox-[^/]+/workspace a git repo \\(\`git: true\`\\): ` +
          `git was not found on the sandbox PATH \\(${escapeRegExp(emptyPath)}\\) while running \`git init --quiet --template=\`\\. ` +
          'Install git or put it on PATH, or create the sandbox without `git: true`\\.$',
      ),
    );
    expect(readdirSync(parent)).toEqual([]);
  });

  it.skipIf(process.platform === 'win32')(
    'SP-02 when git fails, the error shows the command and git’s stderr',
    async () => {
      await using fake = createMockBinary('git', { tmpDir: testDir() });
      fake.enqueue([{ stdout: '' }, { exitCode: 128, stderr: 'fatal: disk on fire\n' }]);
      const parent = testDir();
      expect(() =>
        createSandbox({ git: true, tmpDir: parent, env: { PATH: `${fake.dir}:/usr/bin:/bin` } }),
      ).toThrow(
        /a git repo \(`git: true`\): `git commit --quiet --allow-empty --no-verify -m "initial commit"` exited with 128: fatal: disk on fire\nCheck that `git` works/,
      );
      expect(
        fake.calls().map((c) => c.argv.filter((a) => !a.startsWith('-c') && !a.includes('='))),
      ).toEqual([
        ['init', '--quiet'],
        ['commit', '--quiet', '--allow-empty', '--no-verify', '-m', 'initial commit'],
      ]);
      expect(readdirSync(parent)).toEqual([]);
    },
  );
});

describe('sandbox lifecycle', () => {
  it('SP-01 the sandbox dirs exist inside a private root', async () => {
    const parent = testDir();
    await using sb = createSandbox({ tmpDir: parent });
    expect(sb.root.startsWith(join(parent, 'shimkit-sandbox-'))).toBe(true);
    expect([sb.home, sb.workspace, sb.tmp]).toEqual(
      ['home', 'workspace', 'tmp'].map((d) => join(sb.root, d)),
    );
    for (const dir of [sb.home, sb.workspace, sb.tmp]) expect(existsSync(dir), dir).toBe(true);
    expect(readdirSync(sb.workspace)).toEqual([]);
    expect(sb.platform).toBe(process.platform);
  });

  it('SP-07 dispose() closes tracked processes first, then removes the root; it is idempotent', async () => {
    const sb = createSandbox({ tmpDir: testDir() });
    const seen: string[] = [];
    sb.track({
      close: async () => {
        seen.push(`closed while root exists: ${existsSync(sb.root)}`);
      },
    });
    const untrack = sb.track({
      close: async () => {
        seen.push('untracked process closed');
      },
    });
    untrack();
    const first = sb.dispose();
    expect(sb.dispose()).toBe(first);
    await first;
    await sb[Symbol.asyncDispose]();
    expect(seen).toEqual(['closed while root exists: true']);
    expect(existsSync(sb.root)).toBe(false);
  });

  it('SP-07 a failing close() still removes the root, then dispose() rejects with it', async () => {
    const sb = createSandbox({ tmpDir: testDir() });
    sb.track({ close: () => Promise.reject(new Error('close failed')) });
    await expect(sb.dispose()).rejects.toThrow('close failed');
    expect(existsSync(sb.root)).toBe(false);
  });

  it('SP-07 keep: true leaves the root on disk after dispose()', async () => {
    const sb = createSandbox({ keep: true, tmpDir: testDir() });
    onTestFinished(() => rmSync(sb.root, { recursive: true, force: true }));
    writeFileSync(join(sb.workspace, 'evidence.txt'), 'look at me');
    await sb.dispose();
    expect(existsSync(join(sb.workspace, 'evidence.txt'))).toBe(true);
  });

  it('SP-01 a disposed sandbox throws DisposedError', async () => {
    const sb = createSandbox({ tmpDir: testDir() });
    await sb.dispose();
    const message = `The sandbox ${sb.root} was already disposed; create a new one for this test.`;
    for (const use of [
      () => sb.env(),
      () => sb.setEnv('A', 'b'),
      () => sb.removeEnv('A'),
      () => sb.use('/bin'),
      () => sb.diagnostics(),
      () => sb.track({ close: async () => {} }),
    ]) {
      expect(use).toThrow(DisposedError);
      expect(use).toThrow(message);
    }
  });
});

describe('sandbox option and argument checks', () => {
  const valid = 'env, git, keep, tmpDir, platform, hostEnv, commands, allow';
  it.each<[string, unknown, string]>([
    [
      'options',
      'yes',
      'Expected the options of createSandbox() to be an object, got "yes" (string).',
    ],
    [
      'unknown key',
      { gti: true },
      `Unknown option \`gti\` for createSandbox(). Did you mean \`git\`? Valid options: ${valid}.`,
    ],
    [
      'unknown key, no guess',
      { colour: true },
      `Unknown option \`colour\` for createSandbox(). Valid options: ${valid}.`,
    ],
    [
      'git',
      { git: 'yes' },
      'Expected the `git` option of createSandbox() to be true or false, got "yes" (string).',
    ],
    [
      'keep',
      { keep: 1 },
      'Expected the `keep` option of createSandbox() to be true or false, got 1 (number).',
    ],
    [
      'tmpDir',
      { tmpDir: '' },
      'Expected the `tmpDir` option of createSandbox() to be a directory path, got "" (string).',
    ],
    [
      'env',
      { env: ['A=1'] },
      'Expected the `env` option of createSandbox() to be an object of env var names to strings (or undefined), got ["A=1"] (array).',
    ],
    [
      'env value',
      { env: { PORT: 8080 } },
      'Expected the `env.PORT` option of createSandbox() to be a string without NUL (or undefined), got 8080 (number).',
    ],
    [
      'env key',
      { env: { 'A=B': 'c' } },
      'Expected an env var name in the `env` option of createSandbox(): a non-empty string without "=" or NUL, got "A=B" (string).',
    ],
    [
      'hostEnv',
      { hostEnv: null },
      'Expected the `hostEnv` option of createSandbox() to be an object of env var names to strings (or undefined), got null.',
    ],
    [
      'platform',
      { platform: 'windows' },
      'Expected the `platform` option of createSandbox() to be',
    ],
  ])('SP-01 rejects a bad %s', (_what, options, message) => {
    expect(() => createSandbox(options as SandboxOptions)).toThrow(InvalidOptionError);
    expect(() => createSandbox(options as SandboxOptions)).toThrow(message);
  });

  it('SP-01 a tmpDir that does not exist is an InvalidOptionError naming it, before anything is made', () => {
    const dir = testDir();
    const missing = join(dir, 'nope');
    const file = join(dir, 'file');
    writeFileSync(file, '');

    for (const tmpDir of [missing, file]) {
      expect(() => createSandbox({ tmpDir })).toThrow(InvalidOptionError);
      expect(() => createSandbox({ tmpDir })).toThrow(
        `The \`tmpDir\` option of createSandbox() is not an existing dir: ${tmpDir}. Create it first, or leave \`tmpDir\` out to use os.tmpdir() (${tmpdir()}).`,
      );
    }
    expect(readdirSync(dir)).toEqual(['file']);
  });

  it('SP-01 createTempDir (sandboxes and mocks) says which parent is missing and what to do', () => {
    const dir = testDir();
    const missing = join(dir, 'nope');
    writeFileSync(join(dir, 'file'), '');

    const error = (() => {
      try {
        createTempDir('shimkit-sandbox-', missing);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as Error).message).toBe(
      `Cannot create a temp dir in ${missing}: it does not exist. Create that dir first, or pass another existing dir as \`tmpDir\` (or leave it out to use ${tmpdir()}).`,
    );
    expect((error as Error).cause).toMatchObject({ code: 'ENOENT' });
    expect(() => createTempDir('shimkit', join(dir, 'file'))).toThrow(
      `Cannot create a temp dir in ${join(dir, 'file')}: it is not a dir.`,
    );

    // No parent given and the system temp dir is gone (TMPDIR points nowhere).
    vi.stubEnv('TMPDIR', missing);
    onTestFinished(() => {
      vi.unstubAllEnvs();
    });
    expect(() => createTempDir('shimkit-sandbox-')).toThrow(
      expect.objectContaining({
        code: 'ERR_SHIMKIT_NO_TEMP_DIR',
        message: `Cannot create a temp dir in ${missing} (the system temp dir, os.tmpdir()): it does not exist. Create it, point TMPDIR at an existing dir, or pass \`tmpDir\`.`,
      }),
    );
  });

  it('SP-01 rejects bad setEnv, removeEnv and use arguments', async () => {
    await using sb = createSandbox({ tmpDir: testDir() });
    const cases: Array<[() => unknown, string]> = [
      [
        () => sb.setEnv('', 'x'),
        'Expected an env var name in sandbox.setEnv(): a non-empty string without "=" or NUL, got "" (string).',
      ],
      [
        () => sb.removeEnv('A=B'),
        'Expected an env var name in sandbox.removeEnv(): a non-empty string without "=" or NUL, got "A=B" (string).',
      ],
      [
        () => sb.setEnv('PORT', 8080 as unknown as string),
        'Expected the value of sandbox.setEnv("PORT", …) to be a string without NUL, got 8080 (number). To unset the var, use sandbox.removeEnv("PORT").',
      ],
      [
        () => sb.use('relative/bin'),
        'Expected sandbox.use() to get a MockBinary, a MockBinDir or an absolute dir path, got "relative/bin" (string).',
      ],
      [
        () => sb.use({} as { dir: string }),
        'Expected sandbox.use() to get a MockBinary, a MockBinDir or an absolute dir path, got {} (object).',
      ],
      [
        () => sb.use('/a:/b'),
        'sandbox.use() cannot put "/a:/b" on PATH: it contains ":", which would split the entry. Use a dir without it.',
      ],
    ];
    for (const [call, message] of cases) {
      expect(call).toThrow(InvalidOptionError);
      expect(call).toThrow(message);
    }
  });
});

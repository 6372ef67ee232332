import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMockBinary } from '../../src/index.js';
import { REDACTED } from '../../src/internal/secrets.js';
import { buildSandboxEnv } from '../../src/process/env.js';
import { createSandbox, formatSandboxDiagnostics } from '../../src/process/sandbox.js';
import { runCommand, testDir } from '../helpers/index.js';
import { withoutLeakVars } from '../helpers/leaks.js';
import { sandboxInChild } from '../helpers/sandbox.js';

const ISOLATED_POSIX = [
  'GIT_CONFIG_GLOBAL',
  'GIT_CONFIG_NOSYSTEM',
  'GIT_TERMINAL_PROMPT',
  'HOME',
  'TEMP',
  'TMP',
  'TMPDIR',
  'USERPROFILE',
  'XDG_CACHE_HOME',
  'XDG_CONFIG_HOME',
  'XDG_DATA_HOME',
  'XDG_STATE_HOME',
];

function junk(): Record<string, string> {
  return Object.fromEntries(
    Array.from({ length: 5 }, (_, i) => [
      `FOO_${i}_${Math.random().toString(36).slice(2, 8).toUpperCase()}`,
      `junk-${i}`,
    ]),
  );
}

describe('the sandbox env', () => {
  it('SP-01 a test process full of junk and secrets gives its sandbox only the allowlist and isolated vars', async () => {
    const host = testDir();
    const hostEnv = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      LC_TIME: 'en_GB.UTF-8',
      TZ: 'Europe/Paris',
      TERM: 'xterm-256color',
      SHELL: '/bin/sh',
      HOME: host,
      USERPROFILE: host,
      XDG_CONFIG_HOME: join(host, '.config'),
      TMPDIR: host,
      AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      GITHUB_TOKEN: 'ghp_notarealtoken',
      NODE_OPTIONS: '--max-old-space-size=512',
      GIT_DIR: join(host, 'not-a-repo'),
      GIT_AUTHOR_NAME: 'Host Person',
      Path: 'C:\\not\\on\\posix',
      lc_all: 'lower-case is not LC_*',
      ...junk(),
    };
    const made = await sandboxInChild(hostEnv, testDir());

    expect(Object.keys(made.env).sort()).toEqual(
      [...ISOLATED_POSIX, 'LANG', 'LC_ALL', 'LC_TIME', 'PATH', 'SHELL', 'TERM', 'TZ'].sort(),
    );
    for (const key of ['PATH', 'LANG', 'LC_ALL', 'LC_TIME', 'TZ', 'TERM', 'SHELL'] as const) {
      expect(made.env[key], key).toBe(hostEnv[key]);
    }
    expect(made.env).toMatchObject({
      HOME: made.home,
      USERPROFILE: made.home,
      XDG_CONFIG_HOME: join(made.home, '.config'),
      XDG_CACHE_HOME: join(made.home, '.cache'),
      XDG_DATA_HOME: join(made.home, '.local', 'share'),
      XDG_STATE_HOME: join(made.home, '.local', 'state'),
      TMPDIR: made.tmp,
      TMP: made.tmp,
      TEMP: made.tmp,
      GIT_TERMINAL_PROMPT: '0',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: join(made.home, '.gitconfig'),
    });
    expect(readFileSync(made.env.GIT_CONFIG_GLOBAL as string, 'utf8')).toBe('');
    for (const dir of [made.home, made.workspace, made.tmp, made.env.XDG_STATE_HOME as string]) {
      expect(statSync(dir).isDirectory(), dir).toBe(true);
    }
    expect(statSync(made.root).mode & 0o777).toBe(0o700);
  });

  it('SP-01 on Windows it copies PATH, SystemRoot, ComSpec, PATHEXT and WINDIR in any case, keeping the host spelling', async () => {
    const hostEnv = {
      Path: 'C:\\Windows\\system32;C:\\Program Files\\Git\\cmd',
      SYSTEMROOT: 'C:\\Windows',
      ComSpec: 'C:\\Windows\\system32\\cmd.exe',
      PATHEXT: '.COM;.EXE;.BAT;.CMD',
      windir: 'C:\\Windows',
      LANG: 'en_US.UTF-8', // a POSIX var: not on the Windows allowlist
      USERNAME: 'host-person',
      APPDATA: 'C:\\Users\\host-person\\AppData\\Roaming',
      GITHUB_TOKEN: 'ghp_notarealtoken',
      ...junk(),
    };
    await using sb = createSandbox({ platform: 'win32', hostEnv, tmpDir: testDir() });
    const env = sb.env();
    expect(Object.keys(withoutLeakVars(env)).sort()).toEqual(
      [
        ...ISOLATED_POSIX,
        'APPDATA',
        'LOCALAPPDATA',
        'Path',
        'SYSTEMROOT',
        'ComSpec',
        'PATHEXT',
        'windir',
      ].sort(),
    );
    expect(env).toMatchObject({
      Path: hostEnv.Path,
      SYSTEMROOT: hostEnv.SYSTEMROOT,
      windir: hostEnv.windir,
      APPDATA: join(sb.home, 'AppData', 'Roaming'),
      LOCALAPPDATA: join(sb.home, 'AppData', 'Local'),
      USERPROFILE: sb.home,
    });

    // use() prepends under the host's `Path` spelling with `;`; setEnv of
    // another spelling replaces the var instead of adding a second one.
    const bin = join(sb.root, 'bin');
    sb.use(bin);
    expect(sb.env().Path).toBe(`${bin};${hostEnv.Path}`);
    sb.setEnv('PATH', 'C:\\only').setEnv('systemroot', 'D:\\Windows').removeEnv('WINDIR');
    const changed = sb.env();
    expect(Object.keys(changed).filter((k) => /^(path|systemroot|windir)$/i.test(k))).toEqual([
      'Path',
      'SYSTEMROOT',
    ]);
    expect(changed.Path).toBe(`${bin};C:\\only`);
    expect(changed.SYSTEMROOT).toBe('D:\\Windows');
  });

  it('SP-01 on Windows a fresh PATH is spelled `Path`; POSIX keys are exact', () => {
    const win = buildSandboxEnv({ platform: 'win32', hostEnv: {}, home: '/h', tmp: '/t' });
    expect(Object.keys(win).some((k) => k.toUpperCase() === 'PATH')).toBe(false);
    const posix = buildSandboxEnv({
      platform: 'linux',
      hostEnv: { Path: '/x', path: '/y', SystemRoot: 'C:\\Windows', LC_: 'empty suffix' },
      home: '/h',
      tmp: '/t',
    });
    expect(Object.keys(posix).filter((k) => !ISOLATED_POSIX.includes(k))).toEqual(['LC_']);
  });

  it('SP-01 the `env` option, then setEnv and removeEnv in call order, win over everything', async () => {
    const parent = testDir();
    await using sb = createSandbox({
      tmpDir: parent,
      hostEnv: { PATH: '/usr/bin:/bin', TERM: 'dumb', SHELL: '/bin/sh' },
      env: { HOME: '/from/option', CI: '1', TERM: undefined },
    });
    expect(sb.env()).toMatchObject({ HOME: '/from/option', CI: '1' });
    expect(sb.env()).not.toHaveProperty('TERM');

    sb.setEnv('HOME', '/from/setEnv').setEnv('PATH', '/only/here').setEnv('TERM', 'xterm');
    sb.removeEnv('TMPDIR').removeEnv('CI').setEnv('CI', 'again');
    sb.setEnv('GONE', 'soon').removeEnv('GONE').removeEnv('SHELL');
    const env = sb.env();
    expect(env).toMatchObject({
      HOME: '/from/setEnv',
      PATH: '/only/here',
      TERM: 'xterm',
      CI: 'again',
    });
    for (const key of ['TMPDIR', 'GONE', 'SHELL']) expect(env).not.toHaveProperty(key);

    env.HOME = 'mutated';
    expect(sb.env().HOME).toBe('/from/setEnv'); // a fresh copy each call

    const a = join(parent, 'a');
    const b = join(parent, 'b');
    sb.use(a).use(b);
    expect(sb.env().PATH).toBe(`${b}:${a}:/only/here`);
    sb.use(a); // again: moves to the front
    expect(sb.env().PATH).toBe(`${a}:${b}:/only/here`);
    sb.removeEnv('PATH');
    expect(sb.env().PATH).toBe(`${a}:${b}`); // use() entries survive a removed PATH
  });

  it.skipIf(process.platform === 'win32')(
    'SP-01 use(mock) puts the mock first on PATH: a program run in the sandbox calls the mock',
    async () => {
      await using sb = createSandbox({ tmpDir: testDir() });
      await using git = createMockBinary('git', { tmpDir: testDir() });
      git.enqueue({ stdout: 'On branch mocked\n' });
      sb.use(git);
      expect(sb.env().PATH?.split(':')[0]).toBe(git.dir);

      const result = await runCommand('sh', ['-c', 'git status'], {
        env: sb.env(),
        cwd: sb.workspace,
      });
      expect(result.stderr.toString()).toBe('');
      expect(result.stdout.toString()).toBe('On branch mocked\n');
      expect(git.calls().map((c) => [c.argv, c.cwd])).toEqual([[['status'], sb.workspace]]);
    },
  );
});

describe('sandbox diagnostics', () => {
  it.each([
    ['API_KEY', 'sk-live-123', REDACTED],
    ['GITHUB_TOKEN', 'ghp_abc', REDACTED],
    ['client_secret', 'shh', REDACTED],
    ['DB_PASSWORD', 'hunter2', REDACTED],
    ['HTTP_AUTHORIZATION', 'Bearer abc', REDACTED],
    ['Npm_Auth_Token', 'npm_abc', REDACTED],
    ['ssh_keyfile', '/home/u/.ssh/id', REDACTED],
    ['GITHUB_PAT', 'ghp_abc', REDACTED],
    ['PGPASSWD', 'p', REDACTED],
    ['DB_PASS', 'p', REDACTED],
    ['KEY_PASSPHRASE', 'p', REDACTED],
    ['COOKIE_JAR', 'c', REDACTED],
    ['SESSION', 's', REDACTED],
    ['AZURE_CREDENTIALS', '{}', REDACTED],
    ['PRIVATE_KEY_PATH', '/k', REDACTED],
    ['DATABASE_URL', 'postgres://u:hunter2@db:5432/app', 'postgres://db:5432/app'],
    ['PATTERN', 'a*b', 'a*b'],
    ['GIT_AUTHOR_NAME', 'Ada', 'Ada'],
    ['MYSQL_PWD', 'pw', REDACTED],
    ['DB_PW', 'pw', REDACTED],
    ['PWD', '/home/ada', '/home/ada'],
    ['OLDPWD', '/tmp', '/tmp'],
    ['DSN', 'postgres://u:pa/ss?x#y@db:5432/app', 'postgres://db:5432/app'],
    ['TWO_URLS', 'a://u:p@h1/x b://v:q/r@h2/y', 'a://h1/x b://h2/y'],
    ['XDG_DATA_DIRS', '/usr/share', '/usr/share'],
    ['REPO_URL', 'https://user:pw@host:8080/path?token=x#frag', 'https://host:8080/path'],
    ['MIRROR', 'http://u@example.com', 'http://example.com'],
    ['DOCS', 'https://example.com/a/b', 'https://example.com/a/b'],
    ['SEARCH', 'https://example.com/?q=secret', 'https://example.com/'],
    ['ANCHOR', 'https://example.com/page#access_token=abc', 'https://example.com/page'],
    ['AT_IN_USERINFO', 'https://me:p@ss@example.com/x', 'https://example.com/x'],
    ['SCOPED', 'https://registry.example/@scope/pkg', 'https://registry.example/@scope/pkg'],
    ['PROXY', 'proxy=http://u:p@h/ and more', 'proxy=http://h/ and more'],
    [
      'MIRRORS',
      'git+ssh://git:pw@a.example/r.git,http://b.example/x?sig=1;ftp://c:d@e',
      'git+ssh://a.example/r.git,http://b.example/x',
    ],
    ['REDIRECT', 'http://a/login?next=https://u:p@b/', 'http://a/login'],
    ['QUOTED', '{"url":"https://u:p@h/p?x=1","n":1}', '{"url":"https://h/p","n":1}'],
    ['EDITOR', 'vim', 'vim'],
    ['NOT_A_URL', 'user:pw@host?x=1#y', 'user:pw@host?x=1#y'],
    ['EMPTY', '', ''],
  ])('SP-03 %s=%j is shown as %j', async (key, value, shown) => {
    await using sb = createSandbox({ tmpDir: testDir(), hostEnv: {} });
    sb.setEnv(key, value);
    expect(sb.diagnostics().env[key]).toBe(shown);
    expect(sb.env()[key]).toBe(value); // the real env is untouched
  });

  it('SP-03 diagnostics report the paths and print as a readable report', async () => {
    await using sb = createSandbox({ tmpDir: testDir(), hostEnv: { PATH: '/usr/bin' } });
    sb.setEnv('GH_TOKEN', 'ghp_secret');
    const diagnostics = sb.diagnostics();
    expect({ ...diagnostics, env: withoutLeakVars(diagnostics.env) }).toEqual({
      root: sb.root,
      home: sb.home,
      workspace: sb.workspace,
      tmp: sb.tmp,
      env: { ...withoutLeakVars(sb.env()), GH_TOKEN: REDACTED },
    });
    const text = String(diagnostics);
    // The leak sanitizer's cookie (on for this suite) is one more var.
    const leakVars =
      Object.keys(diagnostics.env).length - Object.keys(withoutLeakVars(diagnostics.env)).length;
    expect(text).toBe(formatSandboxDiagnostics(diagnostics));
    expect(text.split('\n').slice(0, 5)).toEqual([
      `sandbox ${sb.root}`,
      `  home       ${sb.home}`,
      `  workspace  ${sb.workspace}`,
      `  tmp        ${sb.tmp}`,
      `  env (${14 + leakVars} vars, credential-like values redacted):`,
    ]);
    expect(text).toContain(`\n    GH_TOKEN=${REDACTED}\n`);
    expect(text).toContain(`\n    HOME=${sb.home}\n`);
    expect(text).not.toContain('ghp_secret');
  });
});

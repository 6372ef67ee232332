import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { splitWords } from '../../src/cli/verify-pack.js';
import { InvalidOptionError } from '../../src/internal/errors.js';
import { seedCache } from '../../src/pack/cache.js';
import { diagnoseInstall, packageOf } from '../../src/pack/diagnose.js';
import { entryPoints, MAX_ENTRIES } from '../../src/pack/entries.js';
import { checkProjectLock, pinTarballs } from '../../src/pack/lockfile.js';
import { findNpm, npmEnvKeys, npmrcText } from '../../src/pack/npm.js';
import { resolvePackOptions } from '../../src/pack/options.js';
import { PACKING_VAR, parsePackJson, refuseReentry } from '../../src/pack/pack.js';
import { cleaner } from '../../src/pack/report.js';
import { verifyPackedInstall } from '../../src/pack/verify.js';
import { testDir } from '../helpers/index.js';

// The pure parts of verifyPackedInstall(), every shape at once; test/pack/pack.test.ts
// runs the real npm on real packages.

describe('SP-12 entry points from exports', () => {
  const files = [
    'index.js',
    'dist/a.js',
    'dist/b.js',
    'dist/a.d.ts',
    'dist/internal/x.js',
    'data.json',
    'style.css',
  ];
  const subpaths = (exports: unknown, main?: unknown, list = files) =>
    entryPoints('pkg', exports, main, list).entries.map((e) => `${e.specifier}:${e.kind}`);

  test('SP-12 no exports: the main (or index.js) is the one entry; nothing at all is a note', () => {
    expect(subpaths(undefined, './lib/main.js')).toEqual(['pkg:js']);
    expect(subpaths(undefined)).toEqual(['pkg:js']);
    const none = entryPoints('pkg', undefined, undefined, ['bin/cli.js']);
    expect(none.entries).toEqual([]);
    expect(none.notes[0]).toMatch(/nothing to import/);
  });

  test('SP-12 sugar and condition maps are the "." entry', () => {
    expect(subpaths('./dist/a.js')).toEqual(['pkg:js']);
    expect(subpaths({ import: './dist/a.js', require: './dist/a.cjs' })).toEqual(['pkg:js']);
    expect(subpaths(['./dist/a.js'])).toEqual(['pkg:js']);
  });

  test('SP-12 subpath maps: JSON is its own kind, CSS is left out with a note, null hides a subpath', () => {
    const found = entryPoints(
      'pkg',
      {
        '.': { types: './dist/a.d.ts', default: './dist/a.js' },
        './b': './dist/b.js',
        './package.json': './package.json',
        './style.css': './style.css',
        './hidden': null,
      },
      undefined,
      files,
    );
    expect(found.entries.map((e) => `${e.specifier}:${e.kind}`)).toEqual([
      'pkg:js',
      'pkg/b:js',
      'pkg/package.json:json',
    ]);
    expect(found.notes.join('\n')).toMatch(/\.\/style\.css is not JavaScript/);
  });

  test('SP-12 pattern subpaths expand against the tarball files, minus a more specific null', () => {
    const found = entryPoints(
      '@s/pkg',
      { './*': './dist/*.js', './internal/*': null },
      undefined,
      files,
    );
    expect(found.entries.map((e) => e.specifier)).toEqual(['@s/pkg/a', '@s/pkg/b']);
    const types = entryPoints(
      'pkg',
      { './*': { types: './dist/*.d.ts', default: './dist/*.js' } },
      undefined,
      files,
    );
    expect(types.entries.map((e) => e.specifier)).toEqual(['pkg/a', 'pkg/b', 'pkg/internal/x']);
    expect(entryPoints('pkg', { './x/*': './nothing/*.js' }, undefined, files).notes[0]).toMatch(
      /matches no file/,
    );
  });

  test('SP-12 a pattern over thousands of files is capped, with a note', () => {
    const many = Array.from({ length: MAX_ENTRIES + 50 }, (_, i) => `f/${i}.js`);
    const found = entryPoints('pkg', { './*': './f/*.js' }, undefined, many);
    expect(found.entries).toHaveLength(MAX_ENTRIES);
    expect(found.notes.join('\n')).toMatch(/50 more subpaths/);
  });
});

describe('SP-12 npm pack --json, read back', () => {
  const json = JSON.stringify(
    [{ name: 'a', version: '1.0.0', filename: 'a-1.0.0.tgz', files: [{ path: 'index.js' }] }],
    null,
    2,
  );
  test('SP-12 the file name comes from the JSON, even after a script printed to stdout', () => {
    expect(parsePackJson(json)?.filename).toBe('a-1.0.0.tgz');
    expect(parsePackJson(`> build\n[1, 2]\nbuilt\n${json}\n`)?.filename).toBe('a-1.0.0.tgz');
    expect(parsePackJson('npm error code 1\n')).toBeUndefined();
    expect(parsePackJson('[{"filename": 3}]')).toBeUndefined();
  });

  test('SP-12 a verifier inside the npm pack of a verifier is refused, naming both dirs', async () => {
    expect(() => refuseReentry('/p', {})).not.toThrow();
    expect(() => refuseReentry('/inner', { [PACKING_VAR]: '/outer' })).toThrow(/\/outer.*refused/s);
    process.env[PACKING_VAR] = '/outer';
    try {
      await expect(verifyPackedInstall({ packageDir: '.' })).rejects.toMatchObject({
        code: 'ERR_SHIMKIT_PACKED_INSTALL',
        message: expect.stringMatching(/would pack forever; refused/),
      });
    } finally {
      delete process.env[PACKING_VAR];
    }
  });
});

describe('SP-12 the hermetic npm', () => {
  test('SP-12 npm-cli.js is found beside Node on each platform, else npm_execpath, else a message', () => {
    const has = (set: string[]) => (p: string) => set.includes(p);
    expect(
      findNpm({
        execPath: '/usr/bin/node',
        platform: 'linux',
        env: {},
        exists: has(['/usr/lib/node_modules/npm/bin/npm-cli.js']),
      }).cli,
    ).toBe('/usr/lib/node_modules/npm/bin/npm-cli.js');
    expect(
      findNpm({
        execPath: 'C:\\Program Files\\nodejs\\node.exe',
        platform: 'win32',
        env: {},
        exists: has(['C:\\Program Files\\nodejs\\node_modules\\npm\\bin\\npm-cli.js']),
      }).cli,
    ).toBe('C:\\Program Files\\nodejs\\node_modules\\npm\\bin\\npm-cli.js');
    expect(
      findNpm({
        execPath: '/opt/n/bin/node',
        platform: 'linux',
        env: { npm_execpath: '/x/npm-cli.js' },
        exists: has(['/x/npm-cli.js']),
      }).cli,
    ).toBe('/x/npm-cli.js');
    expect(() =>
      findNpm({ execPath: '/opt/n/bin/node', platform: 'linux', env: {}, exists: () => false }),
    ).toThrow(/cannot find npm: .*\/opt\/n\/lib\/node_modules\/npm\/bin\/npm-cli\.js/);
  });

  test('SP-12 its config holds the registry and the caller’s keys only; every npm_* host var is dropped', () => {
    expect(npmrcText('http://r.invalid/', { 'strict-ssl': 'false' })).toMatch(
      /^registry=http:\/\/r\.invalid\/\nstrict-ssl=false\n$/m,
    );
    expect(
      npmEnvKeys({
        npm_config_cache: '/x',
        NPM_CONFIG_USERCONFIG: '/y',
        npm_lifecycle_event: 'test',
        PATH: '/bin',
      }),
    ).toEqual(['npm_config_cache', 'NPM_CONFIG_USERCONFIG', 'npm_lifecycle_event']);
  });

  test('SP-12 the offline lock pins the runtime closure of the host lock, nested paths and peers included', () => {
    const host = {
      packages: {
        '': { name: 'a', dependencies: { b: '^1' }, devDependencies: { t: '1' } },
        'node_modules/b': { version: '1.2.0', integrity: 'sha512-b', dependencies: { c: '^2' } },
        'node_modules/b/node_modules/c': { version: '2.0.0', integrity: 'sha512-c' },
        'node_modules/c': { version: '3.0.0', integrity: 'sha512-c3', dev: true },
        'node_modules/t': { version: '1.0.0', dev: true },
        'node_modules/v': { version: '4.0.0', dev: true, dependencies: { c: '3' } },
      },
    };
    const lock = checkProjectLock(
      host,
      { name: 'a', version: '1.0.0', dependencies: { b: '^1' } },
      'check',
      'file:a.tgz',
      { v: '4' },
    ) as {
      packages: Record<string, { version?: string; dev?: boolean }>;
    };
    expect(Object.keys(lock.packages)).toEqual([
      '',
      'node_modules/a',
      'node_modules/b',
      'node_modules/b/node_modules/c',
      'node_modules/c',
      'node_modules/v',
    ]);
    expect(lock.packages['node_modules/c']).toEqual({ version: '3.0.0', integrity: 'sha512-c3' }); // no dev flag
    // A dependency the lock lacks, or a linked workspace, means no lock (npm resolves).
    expect(
      checkProjectLock(host, { name: 'a', dependencies: { zz: '1' } }, 'check', 'file:a.tgz'),
    ).toBeUndefined();
    expect(
      checkProjectLock(
        { packages: { 'node_modules/b': { link: true } } },
        { name: 'a', dependencies: { b: '1' } },
        'c',
        'f',
      ),
    ).toBeUndefined();
    expect(checkProjectLock(null, { name: 'a' }, 'c', 'f')).toBeUndefined();
  });

  test('SP-12 offline, a lock with every integrity names the tarballs to link; one without one seeds the whole cache', () => {
    const lock = {
      packages: {
        '': { name: 'check' },
        'node_modules/a': { version: '1.0.0', resolved: 'file:../tarball/a-1.0.0.tgz' },
        'node_modules/b': { version: '1.2.0', integrity: 'sha512-YmI=' },
        'node_modules/@s/c': { version: '2.0.0', integrity: 'sha512-Yw==' },
        'node_modules/d': { version: '3.0.0', name: 'real-d', integrity: 'sha1-ZA==' },
        'node_modules/e': {
          version: '1.0.0',
          resolved: 'https://mirror.test/e.tgz',
          integrity: 'sha512-ZQ==',
        },
      },
    };
    expect(pinTarballs(lock, 'https://reg.test/npm')).toEqual([
      'sha512-YmI=',
      'sha512-Yw==',
      'sha1-ZA==',
      'sha512-ZQ==',
    ]);
    expect(lock.packages).toMatchObject({
      'node_modules/b': { resolved: 'https://reg.test/npm/b/-/b-1.2.0.tgz' },
      'node_modules/@s/c': { resolved: 'https://reg.test/npm/@s/c/-/c-2.0.0.tgz' },
      'node_modules/d': { resolved: 'https://reg.test/npm/real-d/-/real-d-3.0.0.tgz' }, // an alias
      'node_modules/e': { resolved: 'https://mirror.test/e.tgz' }, // kept
    });
    expect(lock.packages['node_modules/a']).not.toHaveProperty('integrity');
    expect(
      pinTarballs({ packages: { 'node_modules/x': { version: '1.0.0' } } }, 'r'),
    ).toBeUndefined();
  });

  test('SP-12 offline seeding links only the digests asked for, at cacache’s content paths', () => {
    const host = testDir();
    const content = (hex: string) =>
      join(
        host,
        '_cacache',
        'content-v2',
        'sha512',
        hex.slice(0, 2),
        hex.slice(2, 4),
        hex.slice(4),
      );
    const hexOf = (b64: string) => Buffer.from(b64, 'base64').toString('hex');
    for (const b64 of ['YmJiYg==', 'Y2NjYw==']) {
      mkdirSync(dirname(content(hexOf(b64))), { recursive: true });
      writeFileSync(content(hexOf(b64)), b64);
    }
    mkdirSync(join(host, '_cacache', 'index-v5', 'aa'), { recursive: true });
    writeFileSync(join(host, '_cacache', 'index-v5', 'aa', 'entry'), 'index');
    const some = testDir();
    // One asked for and present, one absent, one not a hash: one file, and no index.
    expect(seedCache(host, some, ['sha512-YmJiYg==', 'sha512-ZGRkZA==', 'junk'])).toBe(1);
    expect(
      readFileSync(
        join(
          some,
          '_cacache',
          'content-v2',
          'sha512',
          hexOf('YmJiYg==').slice(0, 2),
          hexOf('YmJiYg==').slice(2, 4),
          hexOf('YmJiYg==').slice(4),
        ),
        'utf8',
      ),
    ).toBe('YmJiYg==');
    expect(existsSync(join(some, '_cacache', 'index-v5'))).toBe(false);
    const all = testDir();
    expect(seedCache(host, all)).toBe(2);
    expect(readFileSync(join(all, '_cacache', 'index-v5', 'aa', 'entry'), 'utf8')).toBe('index');
  });
});

describe('SP-12 reports', () => {
  test('SP-12 paths and npm timings are cleaned for snapshots, longest path first', () => {
    const clean = cleaner({ sandbox: '/tmp/sb', package: '/tmp/sb/pkg', home: '/root' });
    expect(
      clean(
        'added 3 packages in 2s; took 45ms; /tmp/sb/pkg/x and /tmp/sb/y; /root/.npm/_logs/2026-12-03T06_34_50_126Z-debug-0.log',
      ),
    ).toBe(
      'added 3 packages in <time>; took <time>; <package>/x and <sandbox>/y; <home>/.npm/_logs/<date>-debug-0.log',
    );
  });

  test('SP-12 npm install failures are told by their code, with a fix', () => {
    expect(
      diagnoseInstall(
        'npm error code ENOTCACHED\nnpm error request to https://r.invalid/left-pad failed',
        true,
      ),
    ).toMatchObject({
      cause: 'offline, and the npm cache lacks `left-pad`',
    });
    expect(
      diagnoseInstall(
        "npm error code E404\nnpm error 404  'nope@1' is not in this registry.",
        false,
      )?.cause,
    ).toMatch(/nope@1/);
    expect(
      diagnoseInstall(
        'npm error code ETARGET\nnpm error No matching version found for x@^9.',
        false,
      )?.cause,
    ).toMatch(/x@\^9/);
    expect(diagnoseInstall('something else', false)).toBeUndefined();
    expect([packageOf('tmp/lib/x'), packageOf('@s/a/b'), packageOf('tmp')]).toEqual([
      'tmp',
      '@s/a',
      'tmp',
    ]);
  });
});

describe('SP-12 options, checked when given', () => {
  const bad: Array<[unknown, RegExp]> = [
    [{ packageDir: '/no/such/dir' }, /is not a dir/],
    [{ run: 'x' }, /`run` option/],
    [{ run: [{ bin: 'a b' }] }, /`bin` option of verifyPackedInstall\(\) \(run\[0\]\)/],
    [{ run: [{ bin: 'a', expect: { exitCode: -1 } }] }, /exitCode/],
    [{ run: [{ bin: 'a', expect: { stdout: 3 } }] }, /a string or a RegExp/],
    [{ imports: 'some' }, /"all" or "none"/],
    [{ imports: { subpaths: ['vitest'] } }, /subpaths such as/],
    [{ imports: { esmOnly: 'vitest' } }, /`esmOnly` option/],
    [{ peers: { 'a b': '1' } }, /package name and a version range/],
    [{ npmConfig: { 'a=b': 'c' } }, /npmConfig/],
    [{ registry: 'ftp://x' }, /http\(s\) URL/],
    [{ offline: 'yes' }, /true or false/],
    [{ timeoutMs: 0 }, /timeoutMs/],
    [{ sandbox: {} }, /TestSandbox/],
    [{ packagedir: '.' }, /Did you mean `packageDir`/],
  ];
  test.each(bad)('SP-12 %j is refused', (options, message) => {
    expect(() => resolvePackOptions(options as never)).toThrow(InvalidOptionError);
    expect(() => resolvePackOptions(options as never)).toThrow(message);
  });

  test('SP-12 the CLI splits --run as a shell would, without expanding anything', () => {
    expect(splitWords('verify-pack', `semver 1.2.3 -r '^1 || ^2' "a \\"b\\"" c\\ d $HOME`)).toEqual(
      ['semver', '1.2.3', '-r', '^1 || ^2', 'a "b"', 'c d', '$HOME'],
    );
    expect(() => splitWords('verify-pack', "a 'b")).toThrow(/unclosed '/);
  });
});

import {
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import {
  createSandbox,
  formatPackedInstallReport,
  type PackCheck,
  verifyPackedInstall,
} from '../../src/index.js';
import { runCommand, testDir } from '../helpers/index.js';
import { check, writePackage } from '../helpers/pack.js';

// SP-12 through the real npm: packages the tests write, each broken in one way,
// packed, installed into a sandboxed project and run there.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DIST = join(ROOT, 'dist', 'index.js');
const CLI = join(ROOT, 'dist', 'cli.js');

const GOOD = {
  manifest: {
    bin: { 'fixture-pkg': 'bin/cli.js' },
    exports: {
      '.': { import: './index.mjs', require: './index.cjs' },
      './package.json': './package.json',
    },
    files: ['bin', 'index.mjs', 'index.cjs', 'built.txt'],
    // Lifecycle scripts run as npm runs them: the tarball holds what prepack made.
    scripts: { prepack: "node -e \"require('fs').writeFileSync('built.txt', 'built')\"" },
  },
  files: {
    'bin/cli.js':
      '#!/usr/bin/env node\nconsole.log("fixture " + process.argv.slice(2).join(" ") + " home=" + process.env.HOME);\n',
    'index.mjs': 'export const answer = 42;\n',
    'index.cjs': 'exports.answer = 42;\n',
  },
};

describe('SP-12 verifyPackedInstall', () => {
  test('SP-12 a sound package: real tarball, hermetic install in the sandbox, bin run with its env, every entry loaded', async () => {
    const dir = writePackage(GOOD.manifest, GOOD.files);
    await using sandbox = createSandbox();
    const report = await verifyPackedInstall({
      packageDir: dir,
      sandbox,
      run: [
        {
          bin: 'fixture-pkg',
          args: ['a', 'b c'],
          expect: { exitCode: 0, stdout: /fixture a b c/ },
        },
      ],
    });
    expect(report.ok, formatPackedInstallReport(report)).toBe(true);
    expect(report).toMatchObject({
      name: 'fixture-pkg',
      version: '1.2.3',
      tarball: 'fixture-pkg-1.2.3.tgz',
      offline: false,
    });
    expect(report.files).toEqual([
      'bin/cli.js',
      'built.txt',
      'index.cjs',
      'index.mjs',
      'package.json',
    ]);
    expect(report.tarballPath.startsWith(sandbox.root)).toBe(true);
    expect(report.projectDir.startsWith(sandbox.root)).toBe(true);
    expect(report.results.map((c) => c.name)).toEqual([
      'pack',
      'install',
      'bin fixture-pkg a b c',
      'import fixture-pkg',
      'require fixture-pkg',
      'require fixture-pkg/package.json',
      'types',
    ]);
    // The bin ran with the sandbox's HOME, and types were skipped with a line that says why.
    expect(check(report, 'bin fixture-pkg a b c').stdout).toBe(
      'fixture a b c home=<sandbox>/home\n',
    );
    expect(check(report, 'bin fixture-pkg a b c').command).toBe(
      "<project>/node_modules/.bin/fixture-pkg a 'b c'",
    );
    expect(check(report, 'types').skipped).toMatch(/no types/);
    expect(report.installMs).toBeGreaterThan(0);
    // The text report names no absolute path and no timing: it can be a snapshot.
    const text = formatPackedInstallReport(report);
    expect(text).not.toContain(sandbox.root);
    expect(text).not.toContain(dir);
    expect(text).not.toMatch(/\d+ ms/);
    expect(text.split('\n').at(-1)).toBe('6 checks passed');
  });

  test('SP-12 a bin without a shebang, one with a CRLF shebang, and one not declared each fail with cause and fix', async () => {
    const dir = writePackage(
      { bin: { crlf: 'crlf.js', bare: 'bare.js' } },
      {
        'crlf.js': '#!/usr/bin/env node\r\nconsole.log("hi")\r\n',
        'bare.js': 'console.log("hi")\n',
        'index.js': '',
      },
    );
    const report = await verifyPackedInstall({
      packageDir: dir,
      imports: 'none',
      run: [{ bin: 'crlf' }, { bin: 'bare' }, { bin: 'fixture' }],
    });
    expect(report.ok).toBe(false);
    expect(report.failures.map((c) => c.name)).toEqual(['bin crlf', 'bin bare', 'bin fixture']);
    expect(check(report, 'bin crlf')).toMatchObject({
      cause: expect.stringMatching(/shebang line of crlf\.js.*ends in CRLF/),
      fix: expect.stringMatching(/LF line endings/),
    });
    expect(check(report, 'bin bare')).toMatchObject({
      cause: expect.stringMatching(/bare\.js.*has no shebang/),
      fix: expect.stringMatching(/#!\/usr\/bin\/env node/),
    });
    expect(check(report, 'bin fixture')).toMatchObject({
      problem: 'node_modules/.bin/fixture is not there after the install',
      cause: 'fixture-pkg declares no bin named `fixture` (its bins: crlf, bare)',
    });
  });

  test('SP-12 a bin never built before packing, and a runtime dependency declared as a dev one, are named with the fix', async () => {
    const dir = writePackage(
      {
        // npm packs a bin's file whatever `files` says, but not one that is not there.
        bin: { gone: 'dist/gone.js', needs: 'bin/needs.js' },
        files: ['bin/needs.js', 'index.js'],
        devDependencies: { tmp: '^0.2.0' },
      },
      {
        'bin/needs.js': "#!/usr/bin/env node\nrequire('tmp');\n",
        'index.js': "module.exports = require('tmp');\n",
      },
    );
    const report = await verifyPackedInstall({
      packageDir: dir,
      run: [{ bin: 'gone' }, { bin: 'needs' }],
    });
    expect(check(report, 'bin gone')).toMatchObject({
      cause:
        'dist/gone.js (the file of bin `gone`) is not in the tarball, and not in the package dir either: it was not built before packing',
      fix: expect.stringMatching(/"prepack": "npm run build"/),
    });
    const devDependency = {
      cause: expect.stringMatching(
        /`tmp`, which (bin\/needs\.js|index\.js) imports, is a devDependency of fixture-pkg/,
      ),
      fix: 'move `tmp` from devDependencies to dependencies',
    };
    expect(check(report, 'bin needs')).toMatchObject(devDependency);
    expect(check(report, 'require fixture-pkg')).toMatchObject(devDependency);
    expect(check(report, 'import fixture-pkg')).toMatchObject(devDependency);
  });

  test('SP-12 exports naming a file never built, an ESM-only subpath under require, and a hung import are told apart', async () => {
    const dir = writePackage(
      {
        type: 'module',
        files: ['index.js', 'hang.js'],
        exports: {
          '.': './index.js',
          './missing': './dist/missing.js',
          './unpacked': './unpacked.js',
          './esm': { import: './index.js' },
          './hang': './hang.js',
        },
      },
      {
        'index.js': 'export default 1;\n',
        'unpacked.js': 'export default 2;\n',
        'hang.js': 'await new Promise(() => {});\n',
      },
    );
    const report = await verifyPackedInstall({ packageDir: dir });
    expect(check(report, 'import fixture-pkg').ok).toBe(true);
    expect(check(report, 'import fixture-pkg/missing')).toMatchObject({
      cause: expect.stringMatching(/dist\/missing\.js .* not built before packing/),
      fix: expect.stringMatching(/prepack/),
    });
    expect(check(report, 'import fixture-pkg/unpacked')).toMatchObject({
      cause: expect.stringMatching(
        /^unpacked\.js .* is in the package dir but not in the tarball$/,
      ),
      fix: expect.stringMatching(/add it to `files`/),
    });
    expect(check(report, 'require fixture-pkg/esm')).toMatchObject({
      cause: expect.stringMatching(
        /has the conditions import but none Node uses for require .*ESM only/,
      ),
      fix: expect.stringMatching(/imports: \{ require: false \}/),
    });
    // Node ends a process whose top-level await never settles: the entry is named.
    expect(check(report, 'import fixture-pkg/hang').problem).toMatch(
      /^the process loading it exited with 13 before import\(\) returned/,
    );
    // Type checks are left out by the caller's choice, and ESM only by theirs.
    const esmOnly = await verifyPackedInstall({
      packageDir: dir,
      imports: { require: false, types: false, subpaths: ['.', './esm'] },
    });
    expect(esmOnly.ok, formatPackedInstallReport(esmOnly)).toBe(true);
    expect(esmOnly.results.map((c) => c.name)).toEqual([
      'pack',
      'install',
      'import fixture-pkg',
      'import fixture-pkg/esm',
    ]);
  });

  test('SP-12 a prepack that runs the verifier again is refused with a message, not a loop', async () => {
    const inner = `import(${JSON.stringify(DIST)}).then((m) => m.verifyPackedInstall({ packageDir: '.' })).catch((e) => { console.error(e.code + ': ' + e.message); process.exit(1); })`;
    const dir = writePackage(
      { scripts: { prepack: `node -e ${JSON.stringify(inner)}` } },
      { 'index.js': '' },
    );
    const report = await verifyPackedInstall({ packageDir: dir });
    expect(report.ok).toBe(false);
    expect(report.results.map((c) => c.name)).toEqual(['pack']);
    expect(check(report, 'pack').problem).toBe('npm pack exited with 1');
    expect(check(report, 'pack').stderr).toMatch(
      /ERR_SHIMKIT_PACKED_INSTALL: verifyPackedInstall\(\) of <package> was called from inside the `npm pack` .* refused/,
    );
  });

  test('SP-12 types: tsc of the package’s own TypeScript, node16 as ESM and CommonJS and bundler; a require branch without types fails', async () => {
    const dir = writePackage(
      {
        exports: {
          '.': { types: './index.d.ts', import: './index.mjs', require: './index.cjs' },
          './esm-typed': {
            import: { types: './index.d.ts', default: './index.mjs' },
            require: './index.cjs',
          },
        },
      },
      {
        'index.mjs': 'export const a = 1;\n',
        'index.cjs': 'exports.a = 1;\n',
        'index.d.ts': 'export declare const a: number;\n',
      },
    );
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(join(ROOT, 'node_modules', 'typescript'), join(dir, 'node_modules', 'typescript'));
    const report = await verifyPackedInstall({ packageDir: dir });
    for (const mode of ['node16 (import)', 'node16 (require)', 'bundler']) {
      expect(check(report, `types ${mode} fixture-pkg`).ok, formatPackedInstallReport(report)).toBe(
        true,
      );
    }
    expect(check(report, 'types node16 (import) fixture-pkg/esm-typed').ok).toBe(true);
    expect(check(report, 'types node16 (require) fixture-pkg/esm-typed')).toMatchObject({
      ok: false,
      problem: expect.stringMatching(
        /^tsc 5\.\d+\.\d+: TS7016 Could not find a declaration file for module 'fixture-pkg\/esm-typed'/,
      ),
      fix: expect.stringMatching(
        /add a `types` condition \(first\) to the `require` branch of exports\["\.\/esm-typed"\]/,
      ),
    });
    expect(report.failures.map((c) => c.name)).toEqual([
      'types node16 (require) fixture-pkg/esm-typed',
    ]);
  });

  test('SP-12 a real registry package (semver, packed from the installed copy) installs and its bin answers', async (ctx) => {
    let semverDir: string;
    try {
      semverDir = dirname(createRequire(join(ROOT, 'package.json')).resolve('semver/package.json'));
    } catch {
      ctx.skip(
        true,
        'semver is not installed in node_modules (npm ci installs it with the dev tools)',
      );
      return;
    }
    const copy = testDir('shimkit-semver-');
    for (const entry of readdirSync(semverDir, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const from = join(entry.parentPath, entry.name);
      const to = join(copy, from.slice(semverDir.length));
      mkdirSync(dirname(to), { recursive: true });
      writeFileSync(to, readFileSync(from));
    }
    const report = await verifyPackedInstall({
      packageDir: copy,
      run: [{ bin: 'semver', args: ['1.2.3', '-r', '^1'], expect: { stdout: '1.2.3' } }],
    });
    expect(report.ok, formatPackedInstallReport(report)).toBe(true);
    expect(report.name).toBe('semver');
    expect(check(report, 'require semver').ok).toBe(true);
  });
});

/** Every path under `dir` with its size and mtime: a change anywhere changes it. */
function tree(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((e) => {
      const path = join(e.parentPath, e.name);
      const s = statSync(path, { throwIfNoEntry: false });
      return `${path} ${s?.size} ${s?.mtimeMs}`;
    })
    .sort();
}

describe('SP-12 hermetic: the host’s npm config changes nothing, and nothing is written outside the sandbox', () => {
  test('SP-12 a bogus ~/.npmrc and npm_config_* env on the host: scripts still run, bins still link, the host HOME is untouched', async () => {
    const home = testDir('shimkit-host-home-');
    writeFileSync(
      join(home, '.npmrc'),
      [
        'ignore-scripts=true',
        'bin-links=false',
        'global=true',
        'prefix=/nonexistent/prefix',
        `cache=${join(home, 'bogus-cache')}`,
        'update-notifier=true',
        'audit=true',
        'fund=true',
        'omit=prod',
        'package-lock=false',
        '',
      ].join('\n'),
    );
    const dir = writePackage(GOOD.manifest, GOOD.files);
    const before = tree(home);
    const script = `import(${JSON.stringify(DIST)}).then(async (m) => { const r = await m.verifyPackedInstall({ packageDir: ${JSON.stringify(dir)}, run: [{ bin: 'fixture-pkg' }] }); console.log(JSON.stringify(r)); })`;
    const exit = await runCommand(process.execPath, ['-e', script], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        npm_config_ignore_scripts: 'true',
        npm_config_bin_links: 'false',
        NPM_CONFIG_GLOBAL: 'true',
      },
    });
    expect(exit.code, exit.stderr.toString()).toBe(0);
    const report = JSON.parse(exit.stdout.toString());
    expect(report.ok, JSON.stringify(report.failures, null, 1)).toBe(true);
    expect(report.files).toContain('built.txt'); // prepack ran
    expect(tree(home)).toEqual(before); // no cache, no logs, no notifier stamp in the host HOME
  });

  test('SP-12 offline: installs from a copy of the host cache at the lockfile’s versions; the host cache is never written', async () => {
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
    const entry = lock.packages['node_modules/signal-exit'];
    const dir = writePackage(
      { dependencies: { 'signal-exit': '^4.0.0' } },
      { 'index.js': "module.exports = require('signal-exit');\n" },
    );
    writeFileSync(
      join(dir, 'package-lock.json'),
      JSON.stringify({
        name: 'fixture-pkg',
        version: '1.2.3',
        lockfileVersion: 3,
        requires: true,
        packages: {
          '': { name: 'fixture-pkg', version: '1.2.3', dependencies: { 'signal-exit': '^4.0.0' } },
          'node_modules/signal-exit': entry,
        },
      }),
    );
    const npmCache = (await runCommand('npm', ['config', 'get', 'cache'])).stdout.toString().trim();
    const index = join(npmCache, '_cacache', 'index-v5');
    const before = tree(index);
    const report = await verifyPackedInstall({ packageDir: dir, offline: true });
    expect(report.ok, formatPackedInstallReport(report)).toBe(true);
    // The lock pins signal-exit's tarball by its digest: that one file is linked, not the whole cache.
    expect(report.notes).toContain(
      "offline: dependencies pinned by the package's lockfile; 1 cached file linked from the host's npm cache",
    );
    expect(tree(index)).toEqual(before);
    // A dependency no cache has: the install fails with the cause, offline.
    const missing = writePackage(
      { dependencies: { 'shimkit-fixture-never-published': '^1.0.0' } },
      { 'index.js': '' },
    );
    const failed = await verifyPackedInstall({ packageDir: missing, offline: true });
    expect(check(failed, 'install')).toMatchObject({
      ok: false,
      cause: 'offline, and the npm cache lacks `shimkit-fixture-never-published`',
      fix: expect.stringMatching(/drop `offline`/),
    });
    expect(failed.results.map((c) => c.name)).toEqual(['pack', 'install']);
  });
});

describe('SP-12 shimkit verify-pack', () => {
  test('SP-12 exit 0 with --json for a sound package, 1 with the failed check for a broken one, 2 for a bad flag', async () => {
    const good = writePackage(GOOD.manifest, GOOD.files);
    const ok = await runCommand(process.execPath, [
      CLI,
      'verify-pack',
      good,
      '--run',
      "fixture-pkg 'x y'",
      '--json',
    ]);
    expect(ok.code, ok.stderr.toString()).toBe(0);
    const report = JSON.parse(ok.stdout.toString());
    expect(report.ok).toBe(true);
    expect(report.results.find((c: PackCheck) => c.kind === 'bin').stdout).toMatch(/^fixture x y/);
    const broken = writePackage(
      { bin: { b: 'b.js' } },
      { 'b.js': 'console.log(1)\n', 'index.js': '' },
    );
    const failed = await runCommand(process.execPath, [
      CLI,
      'verify-pack',
      broken,
      '--run',
      'b',
      '--no-imports',
    ]);
    expect(failed.code).toBe(1);
    expect(failed.stdout.toString()).toMatch(
      /FAIL {2}bin b\n.*\n {8}cause: b\.js, the file of bin `b`, has no shebang line/,
    );
    expect(failed.stdout.toString().trimEnd().split('\n').at(-1)).toBe('1 of 3 checks failed');
    const usage = await runCommand(process.execPath, [CLI, 'verify-pack', '--rn', 'x']);
    expect(usage.code).toBe(2);
    expect(usage.stderr.toString()).toMatch(/Did you mean --run\?/);
  });
});

import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { createSandbox, formatPackedInstallReport, verifyPackedInstall } from '../../src/index.js';
import { declaredTypes } from '../../src/pack/types-files.js';
import { testDir } from '../helpers/index.js';
import { check, writePackage } from '../helpers/pack.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

// SP-12 fine print (issue 39): hermetic resolution, cleaned causes, types
// files checked without tsc, every declared bin checked.

describe('SP-12 verifyPackedInstall fine print', () => {
  test('SP-12 hermetic: a devDependency in a node_modules above the sandbox is not found by a bin, import or require', async () => {
    // TMPDIR inside a dir whose node_modules has the devDependency, as under a repo.
    const outer = testDir('shimkit-outer-');
    mkdirSync(join(outer, 'node_modules', 'outer-dep'), { recursive: true });
    writeFileSync(
      join(outer, 'node_modules', 'outer-dep', 'package.json'),
      JSON.stringify({
        name: 'outer-dep',
        version: '1.0.0',
        main: 'index.js',
        exports: { '.': { import: './index.mjs', require: './index.js' } },
      }),
    );
    writeFileSync(join(outer, 'node_modules', 'outer-dep', 'index.js'), 'module.exports = 1;\n');
    writeFileSync(join(outer, 'node_modules', 'outer-dep', 'index.mjs'), 'export default 1;\n');
    mkdirSync(join(outer, 'tmp'));
    await using sandbox = createSandbox({ tmpDir: join(outer, 'tmp') });
    const dir = writePackage(
      {
        bin: { needs: 'needs.js' },
        exports: { '.': { import: './index.mjs', require: './index.cjs' } },
        devDependencies: { 'outer-dep': '^1.0.0' },
      },
      {
        'needs.js': "#!/usr/bin/env node\nrequire('outer-dep');\n",
        'index.cjs': "module.exports = require('outer-dep');\n",
        'index.mjs': "export { default } from 'outer-dep';\n",
      },
    );
    const report = await verifyPackedInstall({ packageDir: dir, sandbox, run: [{ bin: 'needs' }] });
    const devDependency = {
      ok: false,
      cause: expect.stringMatching(
        /`outer-dep`, which (needs\.js|index\.[cm]js) imports, is a devDependency of fixture-pkg/,
      ),
      fix: 'move `outer-dep` from devDependencies to dependencies',
    };
    expect(check(report, 'bin needs'), formatPackedInstallReport(report)).toMatchObject(
      devDependency,
    );
    expect(check(report, 'require fixture-pkg')).toMatchObject(devDependency);
    expect(check(report, 'import fixture-pkg')).toMatchObject(devDependency);
  });
});

describe('SP-12 cleaned causes', () => {
  test('SP-12 a cause names the check project as <project>, never the sandbox path', async () => {
    // exports names a file left out: the cause names the check script that required it.
    const dir = writePackage(
      { exports: './lib/main.js', files: ['index.js'] },
      { 'lib/main.js': 'module.exports = 1;\n', 'index.js': '' },
    );
    await using sandbox = createSandbox();
    const report = await verifyPackedInstall({
      packageDir: dir,
      sandbox,
      imports: { require: false, types: false },
    });
    const imported = check(report, 'import fixture-pkg');
    expect(imported, formatPackedInstallReport(report)).toMatchObject({
      ok: false,
      cause: expect.stringMatching(
        /^lib\/main\.js \(imported by <project>\/shimkit-check-import\.mjs\) is in the package dir but not in the tarball$/,
      ),
    });
    for (const c of report.results) {
      for (const text of [c.problem, c.cause, c.fix, c.skipped, c.stdout, c.stderr]) {
        expect(text ?? '').not.toContain(sandbox.root);
      }
    }
  });
});

describe('SP-12 types files', () => {
  test('SP-12 a types field or types condition naming a file not in the tarball fails without TypeScript installed', async () => {
    const dir = writePackage(
      {
        types: './index.d.ts',
        exports: {
          '.': { types: './index.d.ts', import: './index.mjs', require: './index.cjs' },
          './sub': {
            import: { types: './dist/sub.d.mts', default: './index.mjs' },
            default: './index.cjs',
          },
        },
        files: ['index.mjs', 'index.cjs'],
      },
      {
        'index.mjs': 'export const a = 1;\n',
        'index.cjs': 'exports.a = 1;\n',
        'index.d.ts': 'export declare const a: number;\n',
      },
    );
    const report = await verifyPackedInstall({ packageDir: dir });
    expect(check(report, 'types files'), formatPackedInstallReport(report)).toMatchObject({
      ok: false,
      problem:
        'package.json names types files that are not in the tarball: index.d.ts (`types`), index.d.ts (exports["."]["types"]), dist/sub.d.mts (exports["./sub"]["import"]["types"])',
      cause: 'index.d.ts (the types of `types`) is in the package dir but not in the tarball',
      fix: expect.stringMatching(/add it to `files`/),
    });
    // No TypeScript in the package dir: tsc was skipped, the static check ran all the same.
    expect(check(report, 'types').skipped).toMatch(/TypeScript is not installed/);
    expect(report.failures.map((c) => c.name)).toEqual(['types files']);
  });
});

describe('SP-12 declared bins', () => {
  test('SP-12 every declared bin is checked without running it; only the named ones run', async () => {
    const dir = writePackage(
      {
        bin: {
          named: 'named.js',
          fine: 'fine.js',
          bare: 'bare.js',
          crlf: 'crlf.js',
          gone: 'dist/gone.js',
        },
        files: ['named.js', 'fine.js', 'bare.js', 'crlf.js', 'index.js'],
      },
      {
        'named.js': '#!/usr/bin/env node\nconsole.log("named ran")\n',
        // Running this one would leave a file behind: it must not run.
        'fine.js': '#!/usr/bin/env node\nrequire("fs").writeFileSync("fine-ran", "")\n',
        'bare.js': 'console.log("hi")\n',
        'crlf.js': '#!/usr/bin/env node\r\nconsole.log("hi")\r\n',
        'index.js': '',
      },
    );
    await using sandbox = createSandbox();
    const report = await verifyPackedInstall({
      packageDir: dir,
      sandbox,
      imports: 'none',
      run: [{ bin: 'named', expect: { stdout: 'named ran' } }],
    });
    expect(report.results.map((c) => c.name)).toEqual([
      'pack',
      'install',
      'bin named',
      'bin fine (not run)',
      'bin bare (not run)',
      'bin crlf (not run)',
      'bin gone (not run)',
    ]);
    expect(check(report, 'bin named').ok).toBe(true);
    expect(check(report, 'bin fine (not run)')).toMatchObject({ ok: true });
    expect(check(report, 'bin bare (not run)')).toMatchObject({
      ok: false,
      cause: expect.stringMatching(/bare\.js.*has no shebang/),
    });
    expect(check(report, 'bin crlf (not run)')).toMatchObject({
      ok: false,
      cause: expect.stringMatching(/shebang line of crlf\.js.*ends in CRLF/),
    });
    expect(check(report, 'bin gone (not run)')).toMatchObject({
      ok: false,
      cause: expect.stringMatching(
        /^dist\/gone\.js \(the file of bin `gone`\) is not in the tarball/,
      ),
    });
    // The project is still there (the sandbox is ours): the unnamed bin never ran in it.
    expect(existsSync(join(report.projectDir, 'node_modules'))).toBe(true);
    expect(existsSync(join(report.projectDir, 'fine-ran'))).toBe(false);
  });
});

describe('SP-12 hermetic types', () => {
  test('SP-12 hermetic: types that import a devDependency found only above the sandbox fail the type check', async () => {
    const outer = testDir('shimkit-outer-');
    const dep = join(outer, 'node_modules', 'outer-types');
    mkdirSync(dep, { recursive: true });
    writeFileSync(
      join(dep, 'package.json'),
      JSON.stringify({ name: 'outer-types', version: '1.0.0', types: 'index.d.ts' }),
    );
    writeFileSync(join(dep, 'index.d.ts'), 'export interface Outer { a: number }\n');
    mkdirSync(join(outer, 'tmp'));
    await using sandbox = createSandbox({ tmpDir: join(outer, 'tmp') });
    const dir = writePackage(
      {
        exports: { '.': { types: './index.d.ts', default: './index.js' } },
        devDependencies: { 'outer-types': '^1.0.0' },
      },
      {
        'index.js': 'exports.a = 1;\n',
        'index.d.ts': "import type { Outer } from 'outer-types';\nexport declare const a: Outer;\n",
      },
    );
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(join(ROOT, 'node_modules', 'typescript'), join(dir, 'node_modules', 'typescript'));
    const report = await verifyPackedInstall({
      packageDir: dir,
      sandbox,
      imports: { require: false },
    });
    const failed = report.failures.find((c) => c.kind === 'types');
    expect(failed, formatPackedInstallReport(report)).toMatchObject({
      problem: expect.stringMatching(
        /^tsc read 1 file outside the check project \(first: .*outer-types\/index\.d\.ts\)/,
      ),
      cause: expect.stringMatching(/^`outer-types` is a devDependency of fixture-pkg/),
      fix: 'move `outer-types` from devDependencies to dependencies',
    });
  });
});

describe('SP-12 declared types, read statically', () => {
  test('SP-12 types, typings and every exports types condition are declared types files; patterns are not', () => {
    expect(
      declaredTypes({
        name: 'x',
        types: './a.d.ts',
        typings: 'b.d.ts',
        exports: {
          '.': [{ import: { types: './c.d.mts', default: './c.mjs' } }, './c.cjs'],
          './sub': { typings: './d.d.ts', require: './d.cjs' },
          './features/*': { types: './features/*.d.ts', default: './features/*.js' },
        },
      }),
    ).toEqual([
      { file: './a.d.ts', where: '`types`' },
      { file: 'b.d.ts', where: '`typings`' },
      { file: './c.d.mts', where: 'exports["."][0]["import"]["types"]' },
      { file: './d.d.ts', where: 'exports["./sub"]["typings"]' },
    ]);
  });
});

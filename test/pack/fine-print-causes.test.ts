import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { formatPackedInstallReport, verifyPackedInstall } from '../../src/index.js';
import { linesWithoutRequireEsm } from '../../src/pack/engines.js';
import { runCommand } from '../helpers/index.js';
import { writeDir } from '../helpers/pack.js';

// SP-12 fine print (issue 39, items 5–7): what the CLI says when there is no
// package to check, and the causes of the rarer failures.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(ROOT, 'dist', 'cli.js');

const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
/** This Node loads an ES module with require(). */
const requireEsm = major > 22 || (major === 22 && minor >= 12) || (major === 20 && minor >= 19);

describe('SP-12 no package to check', () => {
  test('SP-12 verify-pack exits 3, naming the package.json and what is wrong with it, when it is missing, not JSON or nameless; no report header', async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [
        { 'index.js': '' },
        /package\.json does not exist: verifyPackedInstall\(\) checks a package dir/,
      ],
      [
        { 'package.json': '{ "name": "x", ' },
        /package\.json is not valid JSON \(.+\): npm cannot pack it/,
      ],
      [{ 'package.json': '[1]' }, /package\.json is not a JSON object/],
      [
        { 'package.json': '{"version":"1.0.0"}' },
        /package\.json has no `name` \(a non-empty string\)/,
      ],
    ];
    const runs = await Promise.all(
      cases.map(async ([files]) => {
        const dir = writeDir(files);
        return { dir, r: await runCommand(process.execPath, [CLI, 'verify-pack', dir]) };
      }),
    );
    for (const [i, { dir, r }] of runs.entries()) {
      const stderr = r.stderr.toString();
      expect(r.code, stderr).toBe(3);
      expect(stderr).toMatch((cases[i] as [unknown, RegExp])[1]);
      expect(stderr).toContain(join(dir, 'package.json'));
      expect(r.stdout.toString()).not.toMatch(/@ \(/);
    }
  });
});

describe('SP-12 causes of the rarer load failures', () => {
  test('SP-12 a CommonJS relative require of a file left out of the tarball, and require() of an ES module with top-level await, each have a cause and fix', async () => {
    const packageDir = writeDir({
      'package.json': JSON.stringify({
        name: 'fixture-pkg',
        version: '1.2.3',
        exports: { '.': './index.js', './tla': './tla.mjs' },
        files: ['index.js', 'tla.mjs'],
      }),
      'index.js': "module.exports = require('./lib/helper');\n",
      'lib/helper.js': 'module.exports = 1;\n',
      'tla.mjs': 'await Promise.resolve();\nexport const x = 1;\n',
    });
    const report = await verifyPackedInstall({
      packageDir,
      imports: { import: false, types: false },
      offline: true,
    });
    const byName = Object.fromEntries(report.results.map((c) => [c.name, c]));
    expect(byName['require fixture-pkg'], formatPackedInstallReport(report)).toMatchObject({
      ok: false,
      cause:
        "lib/helper.js (required by index.js as './lib/helper') is in the package dir but not in the tarball",
      fix: expect.stringMatching(/^add it to `files` in package\.json/),
    });
    if (requireEsm) {
      expect(byName['require fixture-pkg/tla'], formatPackedInstallReport(report)).toMatchObject({
        ok: false,
        cause: expect.stringMatching(
          /^under require, exports\["\.\/tla"\] leads to an ES module that uses top-level await .* ERR_REQUIRE_ASYNC_MODULE$/,
        ),
        fix: expect.stringMatching(/move the top-level await into an exported async function/),
      });
    }
  });
});

describe('SP-12 an ES module under require, and engines', () => {
  test('SP-12 the Node lines an engines.node range admits that cannot require() an ES module', () => {
    const cases: Array<[unknown, string[]]> = [
      ['>=18', ['18', '19', '20.0–20.18', '21', '22.0–22.11']],
      ['^18 || ^20', ['18', '20.0–20.18']],
      ['>=20.0.0', ['20.0–20.18', '21', '22.0–22.11']],
      ['20.18.1', ['20.0–20.18']],
      ['18 - 20.18', ['18', '19', '20.0–20.18']],
      ['>= 14.17 < 19', ['17 and older', '18']],
      ['~20.18.0', ['20.0–20.18']],
      ['>20.18', ['21', '22.0–22.11']],
      ['>=20.19', ['21', '22.0–22.11']],
      ['^20.19.0 || >=22.12.0', []],
      ['^22.12.0', []],
      [undefined, []],
      ['not a range!', []],
    ];
    for (const [range, lines] of cases)
      expect([range, linesWithoutRequireEsm(range)]).toEqual([range, lines]);
  });

  test.runIf(requireEsm)(
    'SP-12 an ESM-only main that this Node can require() passes with a warning naming the Node lines engines admits that cannot',
    async () => {
      const packageDir = writeDir({
        'package.json': JSON.stringify({
          name: 'fixture-pkg',
          version: '1.2.3',
          type: 'module',
          main: 'index.js',
          engines: { node: '^18 || >=20' },
        }),
        'index.js': 'export const x = 1;\n',
      });
      const report = await verifyPackedInstall({
        packageDir,
        imports: { types: false },
        offline: true,
      });
      const text = formatPackedInstallReport(report);
      expect(report.ok, text).toBe(true);
      const required = report.results.find((c) => c.name === 'require fixture-pkg');
      expect(required, text).toMatchObject({ ok: true });
      expect(required?.warning).toBe(
        `require('fixture-pkg') loaded an ES module, which only Node 20.19+ and 22.12+ can do, but engines.node "^18 || >=20" admits Node 18, 20.0–20.18, 21 and 22.0–22.11, where it throws ERR_REQUIRE_ESM: point the \`require\` condition at a CommonJS build, or narrow engines.node (such as "^20.19.0 || >=22.12.0")`,
      );
      expect(report.results.find((c) => c.name === 'import fixture-pkg')?.warning).toBeUndefined();
      expect(text).toMatch(
        / {2}ok {4}require fixture-pkg\n {8}warning: require\('fixture-pkg'\) loaded an ES module/,
      );
      expect(text.split('\n').at(-1)).toMatch(/^\d+ checks passed, 1 warning$/);
    },
  );
});

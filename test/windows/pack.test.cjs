'use strict';
// verify-pack and verifyPackedInstall() under Windows node.exe (Wine 10): what
// it says before any npm runs, with Windows paths. The lane's node.exe has no
// npm beside it, so packing itself is covered by test/pack/*.test.ts on POSIX.
const test = require('node:test');
const assert = require('node:assert/strict');
const { existsSync, writeFileSync } = require('node:fs');
const { dirname, join } = require('node:path');
const { shimkit, tempDir } = require('./helpers.cjs');

const { run, verifyPackedInstall } = shimkit;
const CLI = join(__dirname, '..', '..', 'dist', 'cli.js');
const npmBeside = existsSync(
  join(dirname(process.execPath), 'node_modules', 'npm', 'bin', 'npm-cli.js'),
);

test('SP-12 verify-pack on Windows: a dir without a package.json, or with one that is not JSON, exits 3 naming the file (a Windows path), with no report', async (t) => {
  const missing = tempDir(t);
  const invalid = tempDir(t);
  writeFileSync(join(invalid, 'package.json'), '{ "name": ');
  for (const [dir, what] of [
    [missing, /package\.json does not exist/],
    [invalid, /package\.json is not valid JSON/],
  ]) {
    const r = await run(process.execPath, [CLI, 'verify-pack', dir], { timeoutMs: 60_000 });
    assert.equal(r.exitCode, 3, r.stderr);
    assert.match(r.stderr, what);
    assert.ok(r.stderr.includes(join(dir, 'package.json')), r.stderr);
    assert.match(join(dir, 'package.json'), /^[A-Za-z]:\\/);
    assert.doesNotMatch(r.stdout, /@ \(/);
  }
});

test('SP-12 verifyPackedInstall() on Windows without npm beside node.exe throws PackedInstallError naming where it looked for npm-cli.js as a Windows path (single backslashes)', async (t) => {
  if (npmBeside) {
    t.skip('this node.exe has its npm: the lane does not pack');
    return;
  }
  const dir = tempDir(t);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'tiny', version: '1.0.0' }));
  writeFileSync(join(dir, 'index.js'), 'module.exports = 1;\n');
  const saved = process.env.npm_execpath;
  delete process.env.npm_execpath;
  t.after(() => {
    if (saved !== undefined) process.env.npm_execpath = saved;
  });
  await assert.rejects(verifyPackedInstall({ packageDir: dir }), (error) => {
    assert.equal(error.code, 'ERR_SHIMKIT_PACKED_INSTALL');
    const looked = join(dirname(process.execPath), 'node_modules', 'npm', 'bin', 'npm-cli.js');
    assert.ok(error.message.includes(`cannot find npm: none of "${looked}" exists`), error.message);
    assert.doesNotMatch(error.message, /\\\\/, 'a path in a message has single backslashes');
    return true;
  });
  const r = await run(process.execPath, [CLI, 'verify-pack', dir], { timeoutMs: 60_000 });
  assert.equal(r.exitCode, 3, r.stderr);
  assert.match(r.stderr, /cannot find npm/);
});

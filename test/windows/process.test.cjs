'use strict';
// Test processes on Windows, for real: taskkill /T /F, its failures, and the
// fallback (Wine 10).
const test = require('node:test');
const assert = require('node:assert/strict');
const { readFileSync, writeFileSync, existsSync } = require('node:fs');
const { join } = require('node:path');
const { shimkit, tempDir, until, alive, own } = require('./helpers.cjs');

const { createMockBinary, spawnProcess } = shimkit;

/** A node parent (a TestProcess) that started a node grandchild; resolves once the grandchild's pid is known. */
async function nodeTree(t) {
  const dir = tempDir(t);
  const file = join(dir, 'grandchild.pid');
  const script = join(dir, 'parent.js');
  writeFileSync(
    script,
    `const { spawn } = require('child_process');
     const c = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
     require('fs').writeFileSync(${JSON.stringify(file)}, String(c.pid));
     setInterval(() => {}, 1000);`,
  );
  const p = spawnProcess(process.execPath, [script]);
  t.after(() => p.close());
  await until(
    () => existsSync(file) && readFileSync(file, 'utf8') !== '',
    30_000,
    'the grandchild pid',
  );
  return { p, grandchild: Number(readFileSync(file, 'utf8')) };
}

test('SP-04 close() ends a node -> node tree (taskkill /T /F)', async (t) => {
  const { p, grandchild } = await nodeTree(t);
  assert.ok(alive(grandchild));
  const exit = await p.close();
  assert.equal(exit.signal, null); // Windows reports no signal: taskkill sets exit code 1
  assert.equal(exit.exitCode, 1);
  await until(() => !alive(grandchild), 10_000, 'the grandchild to be gone');
});

test('SP-04 close() ends cmd -> runner: a hanging mocked call', async (t) => {
  const git = own(
    t,
    createMockBinary('git', { tmpDir: tempDir(t), responses: [{ delayMs: 60_000 }] }),
  );
  const p = spawnProcess('git', ['fetch'], { env: git.env() });
  const [call] = await git.waitForCalls(1, { until: 'started', timeoutMs: 30_000 });
  assert.ok(alive(call.pid));
  await p.close();
  await until(() => !alive(call.pid), 10_000, 'the runner to be gone');
});

test('SP-04 close() when taskkill cannot run: bounded, falls back to ending the child, and warns', async (t) => {
  const dir = tempDir(t);
  const { p, grandchild } = await nodeTree(t);
  const key = Object.keys(process.env).find((k) => k.toUpperCase() === 'SYSTEMROOT');
  assert.ok(key, `no SystemRoot in ${Object.keys(process.env).join(', ')}`);
  assert.ok(p.running);
  const saved = process.env[key];
  const warnings = [];
  const onWarning = (w) => warnings.push(w);
  process.on('warning', onWarning);
  process.env[key] = join(dir, 'no-windows-here');
  const started = Date.now();
  try {
    const exit = await p.close();
    assert.equal(exit.signal, 'SIGKILL', JSON.stringify(exit)); // ended by child.kill(), not taskkill
  } finally {
    process.env[key] = saved;
  }
  t.after(() => process.off('warning', onWarning)); // warnings are emitted on the next tick
  assert.ok(Date.now() - started < 15_000, `close() took ${Date.now() - started} ms`);
  assert.equal(p.running, false);
  await until(() => warnings.length > 0, 5000, 'the warning');
  assert.equal(warnings[0].code, 'SHIMKIT_TREE_NOT_ENDED');
  assert.match(warnings[0].message, /could not be started|exited with/);
  // What taskkill would have ended is reported, not silently left: end it here.
  try {
    process.kill(grandchild);
  } catch {}
});

test('SP-13 a PTY is not available on Windows: PtyUnavailableError, before anything is spawned', () => {
  assert.throws(
    () => spawnProcess(process.execPath, ['-e', '0'], { pty: { cols: 80, rows: 24 } }),
    (error) =>
      error instanceof shimkit.PtyUnavailableError &&
      error.code === 'ERR_SHIMKIT_PTY_UNAVAILABLE' &&
      /cannot run on a pseudo-terminal on Windows/.test(error.message),
  );
});

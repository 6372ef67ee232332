'use strict';
// Mock binaries on Windows, for real: the .cmd shim under cmd.exe (Wine 10).
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const { mkdirSync, readFileSync, readdirSync, writeFileSync, existsSync } = require('node:fs');
const { join } = require('node:path');
const {
  shimkit,
  crossSpawn,
  TRICKY_ARGS,
  CROSS_SPAWN_EXACT,
  CROSS_SPAWN_MANGLES,
  tempDir,
  until,
  own,
} = require('./helpers.cjs');

const { createMockBinary, createMockBinDir, run, spawnProcess } = shimkit;

test('MB-21 every tricky argument reaches the call record exactly, one per call, through cross-spawn, run() and spawnProcess()', async (t) => {
  const git = own(t, createMockBinary('git', { tmpDir: tempDir(t) }));
  const env = git.env();
  for (const arg of CROSS_SPAWN_EXACT) {
    const r = crossSpawn.sync('git', [arg], { env, encoding: 'utf8' });
    assert.equal(r.status, 0, `exit for ${JSON.stringify(arg)}: ${r.stderr}`);
  }
  for (const arg of TRICKY_ARGS) {
    const r = await run('git', [arg], { env, timeoutMs: 30_000 });
    assert.equal(r.exitCode, 0, `exit for ${JSON.stringify(arg)}: ${r.stderr}`);
  }
  for (const arg of TRICKY_ARGS) {
    const p = spawnProcess('git', [arg], { env });
    assert.equal((await p.wait({ timeoutMs: 30_000 })).exitCode, 0, JSON.stringify(arg));
    await p.close();
  }
  assert.deepEqual(
    git.calls().map((c) => c.argv),
    [...CROSS_SPAWN_EXACT, ...TRICKY_ARGS, ...TRICKY_ARGS].map((a) => [a]),
  );
});

test('MB-21 cross-spawn 7 itself mangles two or more backslashes before a quote or at the end (documented; run() is exact)', async (t) => {
  const git = own(t, createMockBinary('git', { tmpDir: tempDir(t) }));
  for (const arg of CROSS_SPAWN_MANGLES) {
    crossSpawn.sync('git', [arg, 'next'], { env: git.env(), encoding: 'utf8' });
    assert.notDeepEqual(
      git.lastCall().argv,
      [arg, 'next'],
      'cross-spawn fixed it: update README and this test',
    );
  }
});

test('MB-21 all tricky arguments in one call arrive exactly, through run() and spawnProcess() (cross-spawn: all it does not mangle)', async (t) => {
  const git = own(t, createMockBinary('git', { tmpDir: tempDir(t) }));
  const env = git.env();
  const r = crossSpawn.sync('git', CROSS_SPAWN_EXACT, { env, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const ran = await run('git', TRICKY_ARGS, { env, timeoutMs: 30_000 });
  assert.equal(ran.exitCode, 0, ran.stderr);
  const p = spawnProcess('git', TRICKY_ARGS, { env });
  assert.equal((await p.wait({ timeoutMs: 30_000 })).exitCode, 0);
  await p.close();
  const calls = git.calls().map((c) => c.argv);
  assert.deepEqual(calls, [CROSS_SPAWN_EXACT, TRICKY_ARGS, TRICKY_ARGS]);
});

test('MB-21 run() and spawnProcess() give exact argv by the shim path too (quoted command, backslashes doubled right)', async (t) => {
  const git = own(t, createMockBinary('git', { tmpDir: tempDir(t) }));
  const args = ['a\\\\"b', 'x\\\\', 'y', 'C:\\dir with space\\', 'z'];
  const ran = await run(git.path, args, { timeoutMs: 30_000 });
  assert.equal(ran.exitCode, 0, ran.stderr);
  assert.deepEqual(git.lastCall().argv, args);
});

test('MB-21 scripted stdout, stderr and exit code; a caller with shell: true that quotes as documented', async (t) => {
  const git = own(
    t,
    createMockBinary('git', {
      tmpDir: tempDir(t),
      responses: [{ stdout: 'main\n', stderr: 'warn: ü\n', exitCode: 3 }, { stdout: 'second\n' }],
    }),
  );
  const r = spawnSync('git', ['status'], { env: git.env(), shell: true, encoding: 'utf8' });
  assert.equal(r.status, 3);
  assert.equal(r.stdout, 'main\n');
  assert.equal(r.stderr, 'warn: ü\n');
  // shell: true joins the arguments unquoted: quote each as cross-spawn does for node_modules\.bin.
  const arg = 'a"&b %PATH% !x!';
  const quoted = `"${arg.replaceAll('"', '\\"')}"`.replace(/([()\][%!^"`<>&|;, *?])/g, '^^^$1');
  const r2 = spawnSync('git', [quoted], { env: git.env(), shell: true, encoding: 'utf8' });
  assert.equal(r2.stdout, 'second\n', r2.stderr);
  assert.deepEqual(git.lastCall().argv, [arg]);
});

test('MB-17 a non-ASCII tmpDir with spaces works (the shim names its state from %~dp0)', async (t) => {
  const parent = join(tempDir(t), 'Jürgen 日本');
  mkdirSync(parent);
  const git = own(
    t,
    createMockBinary('git', { tmpDir: parent, responses: [{ stdout: 'ok ü\n' }] }),
  );
  const r = crossSpawn.sync('git', ['x', 'ü'], { env: git.env(), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'ok ü\n');
  assert.deepEqual(git.lastCall().argv, ['x', 'ü']);
});

test('MB-17 a mock dir under a path with %PATH% !x! & ^ (p) works', async (t) => {
  const parent = join(tempDir(t), '%PATH% !x! & ^ (p)');
  mkdirSync(parent);
  const git = own(t, createMockBinary('git', { tmpDir: parent, responses: [{ stdout: 'odd\n' }] }));
  const r = crossSpawn.sync('git', ['%PATH%'], { env: git.env(), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'odd\n');
  assert.deepEqual(git.lastCall().argv, ['%PATH%']);
  const ran = await run('git', ['!x!'], { env: git.env(), timeoutMs: 30_000 });
  assert.equal(ran.exitCode, 0, ran.stderr);
  assert.deepEqual(git.lastCall().argv, ['!x!']);
});

test('MB-17 a Node at a non-ASCII path runs the shim through a link inside the temp dir', async (t) => {
  const dir = join(tempDir(t), 'Jürgen 日本');
  mkdirSync(dir);
  const node = join(dir, 'node.exe');
  require('node:fs').copyFileSync(process.execPath, node);
  const git = own(
    t,
    createMockBinary('git', {
      tmpDir: dir, // not ASCII either: the shim names the link from %~dp0
      nodePath: node,
      responses: [{ stdout: 'linked\n' }],
    }),
  );
  assert.ok(readFileSync(git.path, 'latin1').includes('"%~dp0..\\..\\node\\1\\node.exe" '));
  const r = crossSpawn.sync('git', [], { env: git.env(), encoding: 'utf8' });
  assert.equal(r.stdout, 'linked\n', r.stderr);
});

test('MB-02 16 parallel calls each claim one response exactly once', async (t) => {
  const n = 16;
  const git = own(
    t,
    createMockBinary('git', {
      tmpDir: tempDir(t),
      responses: Array.from({ length: n }, (_, i) => ({ stdout: `r${i}\n` })),
      onExhausted: 'fail',
    }),
  );
  const env = git.env();
  const outs = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      run('git', [`c${i}`], { env, timeoutMs: 60_000 }).then((r) => r.stdout),
    ),
  );
  assert.deepEqual([...outs].sort(), Array.from({ length: n }, (_, i) => `r${i}\n`).sort());
  assert.equal(git.callCount(), n);
  git.assertDone();
});

test('MB-09 install() and uninstall() keep the Path spelling of process.env; env() too', async (t) => {
  const git = own(
    t,
    createMockBinary('git', { tmpDir: tempDir(t), responses: [{ stdout: 'x\n' }] }),
  );
  const key = Object.keys(process.env).find((k) => k.toUpperCase() === 'PATH');
  const before = process.env[key];
  git.install();
  assert.ok(process.env[key].startsWith(`${git.dir};`));
  assert.equal(Object.keys(process.env).filter((k) => k.toUpperCase() === 'PATH').length, 1);
  git.uninstall();
  assert.equal(process.env[key], before);
  // A child env spelled `Path` (as real Windows spells it) keeps that spelling.
  const base = { SystemRoot: process.env.SystemRoot, Path: before };
  const env = git.env(base);
  assert.deepEqual(Object.keys(env).sort(), ['Path', 'SystemRoot']);
  const r = crossSpawn.sync('git', [], { env, encoding: 'utf8' });
  assert.equal(r.stdout, 'x\n', r.stderr);
});

test('MB-07 stdin is captured through the shim', async (t) => {
  const git = own(t, createMockBinary('git', { tmpDir: tempDir(t), stdin: 'capture' }));
  const r = await run('git', ['apply'], { env: git.env(), input: 'patch ü\n', timeoutMs: 30_000 });
  assert.equal(r.exitCode, 0, r.stderr);
  assert.equal(git.lastCall().stdin, 'patch ü\n');
});

test('MB-20 NODE_OPTIONS=--require "C:\\…\\a&b pre.js" reaches the record whole and never the runner', async (t) => {
  const dir = join(tempDir(t), 'a&b (x) 100%');
  mkdirSync(dir);
  const preload = join(dir, 'a&b pre.js');
  writeFileSync(preload, "process.stderr.write('PRELOADED\\n');");
  const git = own(
    t,
    createMockBinary('git', {
      tmpDir: tempDir(t),
      recordEnv: ['NODE_OPTIONS'],
      responses: [{ stdout: 'fine\n' }],
    }),
  );
  const value = `--require "${preload.replaceAll('\\', '/')}"`; // NODE_OPTIONS reads \\ as an escape
  const env = { ...git.env(), NODE_OPTIONS: value };
  // The preload works for a plain node, so the check below can fail:
  const plain = spawnSync(process.execPath, ['-e', '0'], { env, encoding: 'utf8' });
  assert.equal(plain.stderr, 'PRELOADED\n');
  const r = crossSpawn.sync('git', ['a!b', '%PATH%', 'x y'], { env, encoding: 'utf8' });
  assert.equal(r.stdout, 'fine\n', r.stderr);
  assert.equal(r.stderr, ''); // the runner did not load it
  assert.equal(git.lastCall().env.NODE_OPTIONS, value);
  assert.deepEqual(git.lastCall().argv, ['a!b', '%PATH%', 'x y']);
});

test('MB-18 dispose() during a call: the call ends, nothing is left', async (t) => {
  const parent = tempDir(t);
  const git = createMockBinary('git', {
    tmpDir: parent,
    responses: [{ stdout: 'late\n', delayMs: 2000 }],
  });
  const p = spawnProcess('git', [], { env: git.env() });
  await git.waitForCalls(1, { until: 'started', timeoutMs: 30_000 });
  await git.dispose();
  const exit = await p.wait({ timeoutMs: 30_000 });
  assert.equal(exit.timedOut, false);
  await p.close();
  assert.equal(existsSync(git.dir), false);
  // The runner held files open, so the renamed dir is deleted once it exits.
  await until(() => readdirSync(parent).length === 0, 20_000, `${parent} to be empty`);
});

test('MB-09 install() in a process whose env spells it Path keeps that spelling, and a child without env finds the mock', async (t) => {
  const dir = tempDir(t);
  const script = join(dir, 'child.cjs');
  writeFileSync(
    script,
    `const { createMockBinary } = require(${JSON.stringify(require.resolve('../../dist/index.cjs'))});
     const crossSpawn = require(${JSON.stringify(require.resolve('cross-spawn'))});
     const git = createMockBinary('git', { responses: [{ stdout: 'found\\n' }] });
     git.install();
     const keys = Object.keys(process.env).filter((k) => k.toUpperCase() === 'PATH');
     const r = crossSpawn.sync('git', ['x'], { encoding: 'utf8' });
     git.uninstall();
     const after = Object.keys(process.env).filter((k) => k.toUpperCase() === 'PATH');
     git.dispose();
     require('fs').writeFileSync(${JSON.stringify(join(dir, 'out.json'))}, JSON.stringify({ keys, after, out: r.stdout, err: r.stderr }));`,
  );
  const pathValue = process.env.PATH ?? process.env.Path;
  const env = {
    SystemRoot: process.env.SystemRoot,
    TEMP: process.env.TEMP,
    Path: pathValue,
    PATHEXT: '.COM;.EXE;.BAT;.CMD',
  };
  const r = spawnSync(process.execPath, [script], { env, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  const got = JSON.parse(readFileSync(join(dir, 'out.json'), 'utf8'));
  assert.deepEqual(got.keys, ['Path']);
  assert.deepEqual(got.after, ['Path']);
  assert.equal(got.out, 'found\n', got.err);
});

test('SP-04 createSandbox + run("cmd", ["/c", "echo hi"]); sandbox.use(mock)', async (t) => {
  const sb = own(t, shimkit.createSandbox({ tmpDir: tempDir(t) }));
  const r = await run('cmd', ['/c', 'echo hi'], { sandbox: sb, timeoutMs: 30_000 });
  assert.equal(r.exitCode, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'hi');
  const bin = own(t, createMockBinDir({ tmpDir: tempDir(t) }));
  const git = bin.mock('git', { responses: [{ stdout: 'sandboxed\n' }] });
  sb.use(bin);
  const r2 = await run('git', ['log'], { sandbox: sb, timeoutMs: 30_000 });
  assert.equal(r2.stdout, 'sandboxed\n', r2.stderr);
  assert.deepEqual(git.lastCall().argv, ['log']);
});

test('SP-04 run() deadline on a hanging mock: timedOut, exitCode 1 and signal null on Windows, tree gone', async (t) => {
  const git = own(
    t,
    createMockBinary('git', { tmpDir: tempDir(t), responses: [{ delayMs: 60_000 }] }),
  );
  const r = await run('git', ['fetch'], { env: git.env(), timeoutMs: 1500 });
  assert.equal(r.timedOut, true);
  assert.equal(r.signal, null);
  assert.equal(r.exitCode, 1);
  await until(
    () => git.calls()[0]?.status !== 'running',
    10_000,
    'the killed call to be recorded as ended',
  );
});

test('MB-13 routing through the .cmd shim: the first response whose match fits, tricky arguments included', async (t) => {
  const git = own(
    t,
    createMockBinary('git', {
      onExhausted: 'fail',
      responses: [
        { match: { args: ['-C', 'r5', 'push'] }, stderr: 'rejected\n', exitCode: 1 },
        { match: { argsPrefix: ['-C', shimkit.any()] }, stdout: 'ok\n', times: 'always' },
        { match: { args: ['tag', /^v\d+$/] }, stdout: 'tagged\n' },
      ],
    }),
  );
  const env = git.env();
  const call = (args) => crossSpawn.sync('git', args, { env, encoding: 'utf8' });
  assert.equal(call(['-C', 'a"&b', 'push']).stdout, 'ok\n');
  assert.equal(call(['-C', 'r5', 'push']).status, 1);
  assert.equal(call(['tag', 'v12']).stdout, 'tagged\n');
  const miss = call(['tag', '%PATH%']);
  assert.equal(miss.status, shimkit.MockExitCode.unmatched);
  assert.match(miss.stderr, /the closest is #3 .*arg 2: expected \/\^v\\d\+\$\/, got "%PATH%"/);
  assert.deepEqual(
    git.calls().map((c) => c.response),
    [2, 1, 3, undefined],
  );
});

test('MB-16 handle() and hold() through the .cmd shim', async (t) => {
  const git = own(t, createMockBinary('git', { tmpDir: tempDir(t), timeoutMs: 20_000 }));
  git.handle((call) => ({ stdout: `handled ${call.argv.join(' ')}\n` }));
  const env = git.env();
  assert.equal(
    (await run('git', ['log', '%PATH%'], { env, timeoutMs: 30_000 })).stdout,
    'handled log %PATH%\n',
  );
  const held = git.hold({ args: ['push'] });
  const pushing = run('git', ['push'], { env, timeoutMs: 30_000 });
  await held.waitReceived({ timeoutMs: 20_000 });
  held.release({ stdout: 'released\n', exitCode: 2 });
  const r = await pushing;
  assert.equal(r.stdout, 'released\n');
  assert.equal(r.exitCode, 2);
});

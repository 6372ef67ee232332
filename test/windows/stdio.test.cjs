'use strict';
// The proxy on a child's stdio on Windows, for real (Wine 10): proxyStdio of
// node.exe and of a .cmd, its close() ending the tree, and a mock binary
// whose .cmd shim passes a call through to the real server (a .cmd too), with
// faults and without.
const test = require('node:test');
const assert = require('node:assert/strict');
const { existsSync, readFileSync, writeFileSync, mkdirSync } = require('node:fs');
const { join } = require('node:path');
const { shimkit, tempDir, own, until, alive } = require('./helpers.cjs');

const { createFrameReader, createMockBinary, encodeFrame, proxyStdio, run } = shimkit;

/**
 * A JSON-RPC-over-lines server in `dir`: each request line gets
 * `{"id", "result": params}`; the first line it writes is its argv. It ends
 * when its stdin does.
 */
function server(dir) {
  const file = join(dir, 'rpc-server.js');
  writeFileSync(
    file,
    `process.stdout.write(JSON.stringify({ argv: process.argv.slice(2) }) + '\\n');
     require('readline').createInterface({ input: process.stdin }).on('line', (line) => {
       const m = JSON.parse(line);
       process.stdout.write(JSON.stringify({ id: m.id, result: m.params }) + '\\n');
     });`,
  );
  return file;
}

/** `rpc-server.cmd` in `dir`, as npm installs a command: it runs the server with node.exe. */
function serverCmd(dir) {
  const script = server(dir);
  const cmd = join(dir, 'rpc-server.cmd');
  writeFileSync(cmd, `@echo off\r\n"${process.execPath}" "${script}" %*\r\n`);
  return cmd;
}

/** A dir `sub` in `dir` holding rpc-server.cmd, and this process's env with it first on the Path. */
function installed(dir, sub) {
  const bin = join(dir, sub);
  mkdirSync(bin);
  serverCmd(bin);
  const env = { ...process.env };
  const pathKey = Object.keys(env).find((k) => k.toUpperCase() === 'PATH') ?? 'Path';
  env[pathKey] = `${bin};${env[pathKey] ?? ''}`;
  return env;
}

const request = (id, params) => encodeFrame(JSON.stringify({ id, params }), 'lines');
/** Each line of `text` (CR LF or LF) parsed as JSON. */
const jsonLines = (text) =>
  text
    .trim()
    .split(/\r?\n/)
    .map((l) => JSON.parse(l));
const frames = (reader) => reader.texts().map((t) => JSON.parse(t));

test('PX-14 proxyStdio(node.exe): reply 2 dropped, the others intact; close() ends it', async (t) => {
  const dir = tempDir(t);
  const p = await proxyStdio(process.execPath, [server(dir), 'a b'], {
    framing: 'lines',
    faults: [{ action: 'drop', direction: 's2c', frame: 3 }],
  });
  t.after(() => p.close({ graceMs: 500 }));
  const replies = createFrameReader(p.stdout, { framing: 'lines' });
  p.stdin.write(Buffer.concat([request(1, ['x']), request(2, ['y']), request(3, ['z'])]));
  await replies.waitForFrames(3, { timeoutMs: 20_000 });
  assert.deepEqual(frames(replies), [
    { argv: ['a b'] },
    { id: 1, result: ['x'] },
    { id: 3, result: ['z'] },
  ]);
  assert.deepEqual(p.proxy.stats().faults, { drop: 1 });
  const exit = await p.close();
  assert.equal(exit.exitCode, 0); // it ended by itself once its stdin closed
});

test('PX-14 proxyStdio of a .cmd found on the Path (as npm installs a server): exact arguments, frames through', async (t) => {
  const dir = tempDir(t);
  const env = installed(dir, 'bin');
  const tricky = ['a b', 'x&y', '%PATH%', 'q"uote', ''];
  const p = await proxyStdio('rpc-server', tricky, { framing: 'lines', env });
  t.after(() => p.close({ graceMs: 500 }));
  const replies = createFrameReader(p.stdout, { framing: 'lines' });
  p.stdin.write(request(1, ['through cmd']));
  await replies.waitForFrames(2, { timeoutMs: 20_000 });
  assert.deepEqual(frames(replies), [{ argv: tricky }, { id: 1, result: ['through cmd'] }]);
});

test('PX-14 close() of a child that ignores the end of its stdin ends it and what it started (taskkill /T /F)', async (t) => {
  const dir = tempDir(t);
  const pidFile = join(dir, 'grandchild.pid');
  const script = join(dir, 'stubborn.js');
  writeFileSync(
    script,
    `const { spawn } = require('child_process');
     const c = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
     require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(c.pid));
     process.stdin.resume();
     setInterval(() => {}, 1000);`,
  );
  const p = await proxyStdio(process.execPath, [script], { framing: 'lines' });
  t.after(() => p.close({ graceMs: 100 }));
  await until(
    () => existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '',
    30_000,
    'the grandchild pid',
  );
  const grandchild = Number(readFileSync(pidFile, 'utf8'));
  assert.ok(alive(grandchild));
  const exit = await p.close({ graceMs: 300 });
  assert.equal(exit.exitCode, 1); // taskkill's exit code on Windows, no signal
  await until(() => !alive(grandchild), 10_000, 'the grandchild to be gone');
});

test('PX-14 MB-15 a mock binary passes a call through its .cmd shim to the real rpc-server, reply 1 dropped, stdin captured', async (t) => {
  const dir = tempDir(t);
  const env = installed(dir, 'real');
  const mock = own(
    t,
    createMockBinary('rpc-server', {
      tmpDir: dir,
      stdin: 'capture',
      responses: [
        {
          passthrough: {
            framing: 'lines',
            faults: [{ action: 'drop', direction: 's2c', frame: 2 }],
          },
        },
      ],
    }),
  );
  const input = Buffer.concat([request(1, ['one']), request(2, ['two'])]);
  const r = await run('rpc-server', ['--stdio'], { env: mock.env(env), input, timeoutMs: 60_000 });
  assert.equal(r.exitCode, 0, r.stderr);
  assert.deepEqual(jsonLines(r.stdout), [{ argv: ['--stdio'] }, { id: 2, result: ['two'] }]);
  const call = mock.lastCall();
  assert.equal(call.status, 'exited');
  assert.deepEqual(call.argv, ['--stdio']);
  assert.deepEqual(call.proxy.faults, { drop: 1 });
  assert.equal(call.stdin, input.toString()); // captured as it streamed through
  assert.equal(call.proxy.c2s.frames, 2);
  assert.equal(call.proxy.s2c.frames, 2); // forwarded: the argv line and reply 2
});

test('MB-15 a plain passthrough (no faults) reaches a real command installed as a .cmd, arguments exact', async (t) => {
  const dir = tempDir(t);
  const env = installed(dir, 'real');
  const mock = own(
    t,
    createMockBinary('rpc-server', { tmpDir: dir, responses: [{ passthrough: true }] }),
  );
  const args = ['a b', 'x&y', '%PATH%'];
  const r = await run('rpc-server', args, {
    env: mock.env(env),
    input: request(7, ['p']),
    timeoutMs: 60_000,
  });
  assert.equal(r.exitCode, 0, r.stderr);
  assert.deepEqual(jsonLines(r.stdout), [{ argv: args }, { id: 7, result: ['p'] }]);
  assert.deepEqual(mock.lastCall().argv, args);
});

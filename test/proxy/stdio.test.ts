// PX-14: the proxy between a test and a child's stdin/stdout, with real stdio
// peers: a JSON-RPC-over-lines server (Python, standard library) and pylsp,
// the Python language server (Content-Length framing), which nobody here wrote.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  createFrameReader,
  encodeFrame,
  proxyStdio,
  SpawnError,
  type StdioProxy,
} from '../../src/index.js';
import { stdioSpawn } from '../../src/proxy/stdio.js';
import { python3, testDir } from '../helpers/index.js';

const JSONRPC = fileURLToPath(new URL('../fixtures/jsonrpc_stdio.py', import.meta.url));
const request = (id: number, method: string, params?: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });

/** Closed (and its child reaped) when the test ends. */
function track(server: StdioProxy): StdioProxy {
  onTestFinished(async () => {
    await server.close({ graceMs: 500 });
  });
  return server;
}

// .ci/run installs pylsp and sets SHIMKIT_LANGUAGES_REQUIRED=1: there a missing pylsp fails the test instead.
const pylsp =
  spawnSync('pylsp', ['--version'], { stdio: 'ignore' }).status === 0 ||
  process.env.SHIMKIT_LANGUAGES_REQUIRED === '1';
if (!pylsp) {
  console.warn(
    'SKIPPED: the pylsp tests of PX-14 need pylsp (Debian: apt-get install python3-pylsp; .ci/run installs it).',
  );
}

describe('PX-14 the proxy on a child process’s stdio', () => {
  it('PX-14 PX-11 a JSON-RPC server over stdio (lines): reply 2 dropped, the others intact, the exit seen', async () => {
    const server = track(
      await proxyStdio(python3(), [JSONRPC], {
        framing: 'lines',
        faults: [{ action: 'drop', direction: 's2c', frame: 2 }],
      }),
    );
    const replies = createFrameReader(server.stdout, { framing: 'lines' });
    server.stdin.write(encodeFrame(request(1, 'echo', ['hi']), 'lines'));
    server.stdin.write(encodeFrame(request(2, 'add', [1, 2]), 'lines'));
    server.stdin.write(encodeFrame(request(3, 'add', [3, 4]), 'lines'));
    await server.proxy.waitForFrames('s2c', 2);
    expect(replies.texts().map((t) => JSON.parse(t))).toEqual([
      { jsonrpc: '2.0', id: 1, result: ['hi'] },
      { jsonrpc: '2.0', id: 3, result: 7 },
    ]);
    expect(server.proxy.stats().faults).toEqual({ drop: 1 });
    server.stdin.write(encodeFrame(request(4, 'exit'), 'lines'));
    expect(await server.exited).toEqual({ exitCode: 0, signal: null });
    await replies.waitForEnd();
    expect(replies.texts()).toHaveLength(3);
  });

  it('PX-14 PX-02 requests can be faulted too: a corrupted request gets a parse error, a delayed one still arrives in order', async () => {
    const server = track(
      await proxyStdio(python3(), [JSONRPC], {
        framing: 'lines',
        faults: [
          { action: 'corrupt', direction: 'c2s', frame: 1, bits: 40 },
          { action: 'delay', direction: 'c2s', frame: 2, delayMs: 20 },
        ],
        seed: 3,
      }),
    );
    const replies = createFrameReader(server.stdout, { framing: 'lines' });
    for (const [id, n] of [
      [1, 1],
      [2, 2],
      [3, 3],
    ]) {
      server.stdin.write(encodeFrame(request(id as number, 'add', [n, n]), 'lines'));
    }
    const [first, ...rest] = (await replies.waitForFrames(3)).map((b) => JSON.parse(String(b)));
    expect(first).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'parse error' },
    });
    expect(rest).toEqual([
      { jsonrpc: '2.0', id: 2, result: 4 },
      { jsonrpc: '2.0', id: 3, result: 6 },
    ]);
  });

  it.skipIf(!pylsp)(
    'PX-14 PX-15 PX-13 pylsp (Content-Length): the initialize reply is held until released, then shutdown and exit; the timeline shows it',
    async () => {
      const dir = testDir();
      const server = track(
        await proxyStdio('pylsp', [], {
          framing: 'content-length',
          record: true,
          cwd: dir,
          env: { ...process.env, HOME: dir },
        }),
      );
      const replies = createFrameReader(server.stdout, { framing: 'content-length' });
      const gate = server.proxy.hold({ direction: 's2c', frame: 1 });
      const send = (message: object) =>
        server.stdin.write(
          encodeFrame(JSON.stringify({ jsonrpc: '2.0', ...message }), 'content-length'),
        );
      send({
        id: 1,
        method: 'initialize',
        params: { processId: null, rootUri: null, capabilities: {} },
      });
      await gate.waitHeld(1, { timeoutMs: 20_000 }); // pylsp takes a while to start
      expect(replies.frames()).toHaveLength(0);
      gate.release();
      const [init] = await replies.waitForFrames(1);
      const reply = JSON.parse(String(init));
      expect(reply.id).toBe(1);
      expect(reply.result.capabilities).toHaveProperty('textDocumentSync');
      send({ method: 'initialized', params: {} });
      send({ id: 2, method: 'shutdown' });
      await expect
        .poll(() => replies.texts().some((t) => JSON.parse(t).id === 2), { timeout: 10_000 })
        .toBe(true);
      send({ method: 'exit' });
      expect(await server.exited).toEqual({ exitCode: 0, signal: null });
      const timeline = server.proxy.timeline();
      expect(timeline).toMatch(
        / c2s #1 {2}conn 1 {2}\d+ B {2}\{"jsonrpc":"2\.0","id":1,"method":"initia…/,
      );
      expect(timeline).toMatch(/ s2c #1 {2}conn 1 {2}\d+ B {2}\{"jsonrpc": ?"2\.0".*HELD$/m);
    },
    30_000,
  );

  it('PX-14 a command that cannot start is a SpawnError; close() kills a child that ignores the end of its stdin', async () => {
    await expect(proxyStdio('/nonexistent/server', [])).rejects.toThrow(SpawnError);
    await expect(proxyStdio('python3', [JSONRPC], { framming: 'lines' } as never)).rejects.toThrow(
      'Unknown option `framming` for proxyStdio(). Did you mean `framing`?',
    );
    const stubborn = await proxyStdio('sleep', ['60']);
    expect(await stubborn.close({ graceMs: 50 })).toEqual({ exitCode: null, signal: 'SIGKILL' });
  });
});

describe('PX-14 how proxyStdio starts its command (the Windows branch, with an injected platform)', () => {
  it('PX-14 Windows: a .cmd on the PATH runs through cmd.exe with its arguments quoted; a .exe and a command not found run as given; POSIX leads its own group', () => {
    const cmd = stdioSpawn(
      'mcp-server',
      ['--stdio', 'a b', 'x&y'],
      'C:\\tools\\mcp-server.cmd',
      'win32',
    );
    // Quoted for the program's C runtime, then each metacharacter escaped for cmd.exe.
    expect(cmd.args).toEqual([
      '/d',
      '/s',
      '/v:off',
      '/c',
      '""mcp-server" ^"--stdio^" ^"a^ b^" ^"x^&y^""',
    ]);
    expect([cmd.windowsVerbatimArguments, cmd.detached]).toEqual([true, false]);
    const plain = { args: ['x y'], windowsVerbatimArguments: false, detached: false };
    expect(stdioSpawn('tool', ['x y'], 'C:\\tools\\tool.exe', 'win32')).toEqual({
      file: 'C:\\tools\\tool.exe',
      ...plain,
    });
    expect(stdioSpawn('missing', ['x y'], undefined, 'win32')).toEqual({
      file: 'missing',
      ...plain,
    });
    expect(stdioSpawn('python3', ['s.py'], undefined, 'linux')).toEqual({
      file: 'python3',
      args: ['s.py'],
      windowsVerbatimArguments: false,
      detached: true,
    });
  });
});

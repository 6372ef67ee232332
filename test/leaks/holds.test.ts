// What an undisposed object still holds at the protocol level (LK-02), as
// the leak sanitizer reports it: each object's leakHolds() on real objects
// holding something real — a mock call in flight, a held HTTP request, a
// delayed frame, a PTY's foreground program, a sandbox's running process.
import { renameSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import {
  createFrameProxy,
  createMockBinary,
  createMockServer,
  createSandbox,
  run,
  spawnProcess,
} from '../../src/index.js';
import { holdLines } from '../../src/internal/leak-lines.js';
import { tpgidOf } from '../../src/process/pty/foreground.js';
import { frame, frameServer } from '../helpers/frames.js';
import { testDir } from '../helpers/index.js';
import { openClient } from '../helpers/proxy.js';

const linux = process.platform === 'linux';
const WAIT = { timeout: 10_000, interval: 20 };

/** A raw client socket to `url`'s port, destroyed in the test's finally. */
async function rawClient(url: string, sockets: Socket[]): Promise<Socket> {
  const { hostname, port } = new URL(url);
  const socket = connect({ host: hostname, port: Number(port) });
  sockets.push(socket);
  socket.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return socket;
}

describe('LK-02 what an undisposed object still holds', () => {
  it('LK-02 holdLines() turns a part that throws into a line, and never throws itself', () => {
    const lines = holdLines({
      'the first part': () => 'a line',
      'a broken part': () => {
        throw new Error('EIO: i/o error\nsecond line');
      },
      'an odd part': () => {
        throw 42;
      },
      'nothing held': () => undefined,
      'two lines': () => ['b', 'c'],
    });
    expect(lines).toEqual([
      'a line',
      'could not read a broken part: EIO: i/o error',
      'could not read an odd part: 42',
      'b',
      'c',
    ]);
    expect(tpgidOf('4242 (a) b) S 1 4242 4242 34816 4250 4194560 0')).toBe(4250);
  });

  it('LK-02 a mock binary with a call in flight: the live call, the hold not released, the responses never claimed', async () => {
    const dir = testDir();
    await using git = createMockBinary('git', {
      tmpDir: dir,
      responses: [{ stdout: 'one\n' }, { stdout: 'two\n' }],
    });
    expect(git.leakHolds()).toEqual(['2 responses of git never claimed']);
    const hold = git.hold({ args: ['push', 'origin', 'main'] });
    expect(git.leakHolds()).toEqual([
      '1 hold of git not released: waiting for a call fitting {"args":["push","origin","main"]}',
      '2 responses of git never claimed',
    ]);
    const call = run('git', ['push', 'origin', 'main'], { env: git.env(), timeoutMs: 30_000 });
    try {
      await hold.waitReceived({ timeoutMs: 10_000 });
      const lines = git.leakHolds();
      expect(lines).toHaveLength(3);
      expect(lines[0]).toMatch(/^1 live call: git push origin main \(pid \d+, \d+\.\d s\)$/);
      expect(lines[1]).toMatch(
        /^1 hold of git not released: call #1 git push origin main \(held \d+\.\d s\)$/,
      );
      expect(lines[2]).toBe('1 response of git never claimed');
    } finally {
      hold.release();
      await call;
    }
    expect(git.leakHolds()).toEqual(['1 response of git never claimed']);
    await git.dispose();
    expect(git.leakHolds()).toEqual([]);
  });

  it('LK-02 a strict mock says in one line what assertDone() would', async () => {
    await using git = createMockBinary('git', {
      tmpDir: testDir(),
      strict: true,
      responses: [{ stdout: 'main\n' }],
    });
    expect(git.leakHolds()).toEqual([
      'strict, not done: mock "git": 0 of 1 responses used; never used: #1 {stdout:"main\\n"}',
    ]);
    git.reset(); // done now: dispose() does not throw
    expect(git.leakHolds()).toEqual([]);
  });

  it('LK-02 a mock whose state dir cannot be read says so in one line instead of throwing', async () => {
    await using git = createMockBinary('git', { tmpDir: testDir(), responses: [{ stdout: 'x' }] });
    const away = `${git.stateDir}.away`;
    renameSync(git.stateDir, away);
    try {
      const lines = git.leakHolds();
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^could not read its state dir: .*state/);
    } finally {
      renameSync(away, git.stateDir);
    }
  });

  it('LK-02 a mock server: the held request, the open connections, a stream its client does not read, a response never used', async () => {
    const sockets: Socket[] = [];
    const api = await createMockServer();
    try {
      api.enqueue({ text: 'after the hold' });
      // A first event, then a pause: the stream is still in progress.
      const big = { data: 'x'.repeat(256 * 1024) };
      api.expect({ path: '/sse' }, { sse: [big, { data: 'last' }], eventDelayMs: 60_000 });
      api.expect({ path: '/never' }, { text: 'n' }, { name: 'never' });
      expect(api.leakHolds()).toEqual([
        "3 scripted responses never used: expectation 'expect#1', expectation 'never', fifo#1",
      ]);
      const held = api.hold({ path: '/held' });
      const a = await rawClient(api.url, sockets);
      a.write('GET /held HTTP/1.1\r\nhost: x\r\n\r\n');
      await held.waitBlocked({ timeoutMs: 10_000 });
      // A client that asks for a long stream and reads none of it.
      const b = await rawClient(api.url, sockets);
      b.pause();
      b.write('GET /sse HTTP/1.1\r\nhost: x\r\n\r\n');
      await vi.waitFor(() => {
        const lines = api.leakHolds();
        expect(lines[0]).toMatch(/^1 held request: GET \/held \(held \d+\.\d s\)$/);
        expect(lines[1]).toBe('2 client connections open');
        expect(lines[2]).toMatch(
          /^1 response still in progress: GET \/sse \(1 event, 256\.0 KiB sent\)$/,
        );
        if (linux)
          expect(lines[3]).toMatch(/^[\d.]+ (KiB|MiB) written to clients and not read by them$/);
        expect(lines.at(-1)).toBe("1 scripted response never used: expectation 'never'");
      }, WAIT);
    } finally {
      for (const socket of sockets) socket.destroy();
      await api.dispose();
    }
    expect(api.leakHolds()).toEqual([]);
  });

  it('LK-02 a frame proxy: its open client connection with what it forwarded, a delayed frame and a held one per direction', async () => {
    const dir = testDir();
    const server = await frameServer(dir);
    await using proxy = await createFrameProxy({
      listen: join(dir, 'proxy.sock'),
      upstream: server.path,
      faults: [{ action: 'delay', direction: 'c2s', frame: 2, delayMs: 60_000 }],
    });
    expect(proxy.leakHolds()).toEqual([]);
    const gate = proxy.hold({ direction: 's2c', frame: 1 });
    const { socket } = await openClient(proxy.address);
    try {
      socket.write(Buffer.concat([frame('one'), frame('two'), frame('three')]));
      const upstream = await server.nextConnection();
      await upstream.frameCount(1);
      upstream.socket.write(frame('reply'));
      await gate.waitHeld();
      const lines = proxy.leakHolds();
      expect(lines[0]).toBe('1 client connection open: #1 (c2s 1 frame 7 B, s2c 0 frames 0 B)');
      expect(lines[1]).toMatch(/^2 frames \(16 B\) queued c2s \(delay \d+ ms left\)$/);
      expect(lines[2]).toBe('1 frame (9 B) queued s2c (1 held by hold())');
      expect(lines).toHaveLength(3);
    } finally {
      gate.release();
      socket.destroy();
    }
    await proxy.close();
    expect(proxy.leakHolds()).toEqual([]);
  });

  it.runIf(linux)(
    'LK-02 a PTY process: still running, the foreground program of its terminal, output no wait read',
    async () => {
      const p = spawnProcess('sh', ['-c', 'echo ready; exec sleep 600'], {
        pty: true,
        cwd: testDir(),
      });
      try {
        await vi.waitFor(() => {
          const lines = p.leakHolds();
          expect(lines[0]).toMatch(new RegExp(`^still running \\(pid ${p.pid}, \\d+\\.\\d s\\)$`));
          expect(lines[1]).toMatch(/^PTY foreground: sleep \(pid \d+\)$/);
          expect(lines[2]).toMatch(/^\d+ B of terminal output not read by a wait$/);
        }, WAIT);
        await p.waitForOutput('ready');
        expect(p.leakHolds()).toHaveLength(2); // read by that wait
      } finally {
        await p.close({ graceMs: 0 });
      }
      expect(p.leakHolds()).toEqual([]);
    },
  );

  it('LK-02 a sandbox: the processes it tracks that still run, and the PATH dirs it uses', async () => {
    const dir = testDir();
    await using sb = createSandbox({ tmpDir: dir });
    const bin = join(dir, 'bin');
    sb.use(bin);
    expect(sb.leakHolds()).toEqual([`PATH dirs used: ${bin}`]);
    const p = spawnProcess('sh', ['-c', 'echo hi; exec sleep 600'], { sandbox: sb });
    try {
      await vi.waitFor(() => expect(p.stdout.totalBytes).toBe(3), WAIT);
      const lines = sb.leakHolds();
      expect(lines[0]).toMatch(
        new RegExp(
          `^1 process running: sh -c "echo hi; exec sleep 600" \\(pid ${p.pid}, \\d+\\.\\d s\\)$`,
        ),
      );
      expect(lines[1]).toBe(`PATH dirs used: ${bin}`);
      expect(p.leakHolds()).toEqual([
        expect.stringMatching(new RegExp(`^still running \\(pid ${p.pid}, \\d+\\.\\d s\\)$`)),
        '3 B of output not read by a wait',
      ]);
    } finally {
      await p.close({ graceMs: 0 });
    }
    expect(sb.leakHolds()).toEqual([`PATH dirs used: ${bin}`]);
    await sb.dispose();
    expect(sb.leakHolds()).toEqual([]);
  });
});

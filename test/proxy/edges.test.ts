// What a hostile review of the framings, holds, record and proxyStdio found,
// each reproduced through the real proxy (or a real child) and fixed.
import { spawn } from 'node:child_process';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  createFrameProxy,
  createFrameReader,
  encodeFrame,
  type FrameMalformedError,
  type Framer,
  proxyStdio,
} from '../../src/index.js';
import { isAlive, python3, testDir } from '../helpers/index.js';
import { client, echoServer } from '../helpers/proxy.js';

/** NUL-terminated frames: the terminator follows the body (no header). */
const nul: Framer = {
  name: 'nul',
  decode(buffer) {
    const frames: Buffer[] = [];
    let at = 0;
    for (let end = buffer.indexOf(0, at); end >= 0; end = buffer.indexOf(0, at)) {
      frames.push(buffer.subarray(at, end));
      at = end + 1;
    }
    return { frames, rest: buffer.subarray(at) };
  },
  encode: (frame) => Buffer.concat([frame, Buffer.from([0])]),
};

/** A 1-byte length, then the body; `decode` returns one frame a call (allowed by the contract). */
const oneAtATime: Framer = {
  name: 'u8-one',
  decode(buffer) {
    const n = buffer[0];
    if (n === undefined || buffer.length < 1 + n) return { frames: [], rest: buffer };
    return { frames: [buffer.subarray(1, 1 + n)], rest: buffer.subarray(1 + n) };
  },
  encode: (frame) => Buffer.concat([Buffer.from([frame.length]), frame]),
};

/** A server that keeps every byte it gets, on a Unix socket in `dir`. */
async function collectingServer(dir: string): Promise<{ path: string; text(): string }> {
  const path = join(dir, 'collect.sock');
  const got: Buffer[] = [];
  const sockets: Socket[] = [];
  const server = createServer((s) => {
    sockets.push(s);
    s.on('data', (chunk: Buffer) => got.push(chunk));
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(path, r));
  onTestFinished(() => {
    for (const s of sockets) s.destroy();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return { path, text: () => Buffer.concat(got).toString('latin1') };
}

/** A proxy with `framing` and `faults` in front of an echo server. */
async function through(
  framing: Framer | 'lines' | 'content-length',
  faults: unknown[],
  extra = {},
) {
  const dir = testDir();
  const proxy = await createFrameProxy({
    listen: join(dir, 'proxy.sock'),
    upstream: await echoServer(dir),
    framing,
    faults: faults as never,
    ...extra,
  });
  onTestFinished(() => proxy.close());
  const socket = await client(proxy.address);
  return { proxy, socket, replies: createFrameReader(socket, { framing }) };
}

describe('PX-11 custom framers at the edges', () => {
  it('PX-11 a Framer whose encode throws closes that connection with a FrameMalformedError, not the process', async () => {
    const picky: Framer = {
      ...nul,
      name: 'picky',
      encode: (frame) => {
        if (frame.length < 3) throw new Error('too short to encode');
        return nul.encode(frame);
      },
    };
    const { proxy, socket, replies } = await through(picky, [
      { action: 'truncate', direction: 'c2s', frame: 2, keepBytes: 1 },
    ]);
    socket.write(Buffer.from('first\0second\0'));
    await replies.waitForEnd(); // severed: the truncated frame 2 could not be rebuilt
    expect(proxy.stats().c2s.frames).toBe(1);
    expect((proxy.errors()[0] as FrameMalformedError).reason).toBe(
      "the picky framer's encode() threw: too short to encode",
    );
  });

  it('PX-11 a decode that returns one frame a call still has every frame counted and faulted', async () => {
    const { proxy, socket, replies } = await through(oneAtATime, [
      { action: 'drop', direction: 'c2s', frame: 3 },
    ]);
    socket.write(Buffer.concat(['aa', 'bb', 'cc', 'dd'].map((t) => encodeFrame(t, oneAtATime))));
    await replies.waitForFrames(3);
    expect(replies.texts()).toEqual(['aa', 'bb', 'dd']);
    expect(proxy.stats().c2s.frames).toBe(3);
  });

  it('PX-11 PX-14 the same Buffer written three times is three chunks: each frame is counted and faulted', async () => {
    await using cat = await proxyStdio('cat', [], {
      framing: oneAtATime,
      faults: [{ action: 'drop', direction: 'c2s', frame: 3 }],
    });
    const replies = createFrameReader(cat.stdout, { framing: oneAtATime });
    const message = encodeFrame('hi', oneAtATime);
    for (let n = 1; n <= 3; n++) {
      cat.stdin.write(message);
      await cat.proxy.waitForFrames('c2s', Math.min(n, 2)); // each write read on its own
      if (n === 3) await expect.poll(() => cat.proxy.stats().faults.drop).toBe(1);
    }
    expect(cat.proxy.stats().c2s).toEqual({ frames: 2, bytes: 6 });
    await replies.waitForFrames(2);
  });

  it('PX-02 corrupt on a custom framing never writes a byte that ends the frame; sever-mid-frame never lets the whole frame through', async () => {
    const body = Buffer.alloc(6, 0x01); // every byte is one flip from NUL
    const { socket, replies } = await through(nul, [
      { action: 'corrupt', direction: 'c2s', frame: 1, bits: 8 },
    ]);
    socket.write(nul.encode(body));
    const [corrupted] = await replies.waitForFrames(1);
    expect(corrupted?.length).toBe(6);
    expect(corrupted?.includes(0)).toBe(false);
    expect(corrupted?.equals(body)).toBe(false);

    const dir = testDir();
    const server = await collectingServer(dir);
    const proxy = await createFrameProxy({
      listen: join(dir, 'p.sock'),
      upstream: server.path,
      framing: nul,
      faults: [{ action: 'sever-mid-frame', direction: 'c2s', frame: 1, keepBytes: 6 }],
    });
    onTestFinished(() => proxy.close());
    const sender = await client(proxy.address);
    sender.write(Buffer.from('abcdef\0'));
    await new Promise<void>((r) => sender.once('close', () => r()));
    await expect.poll(() => server.text()).toBe('abcdef'); // the NUL is held back
  });
});

describe('PX-02 faults keep the stream as it was', () => {
  it('PX-02 truncate keeps the other headers of a content-length frame and the CR LF of a line', async () => {
    const headers = await through('content-length', [
      { action: 'truncate', direction: 'c2s', frame: 1, keepBytes: 2 },
    ]);
    const server = await new Promise<string>((resolve) => {
      headers.socket.on('data', (chunk: Buffer) => resolve(chunk.toString('latin1')));
      headers.socket.write('Content-Type: text/x\r\nContent-Length: 4\r\n\r\nabcd');
    });
    expect(server).toBe('Content-Type: text/x\r\nContent-Length: 2\r\n\r\nab');

    const crlf = await through('lines', [
      { action: 'truncate', direction: 'c2s', frame: 1, keepBytes: 2 },
    ]);
    const line = await new Promise<string>((resolve) => {
      crlf.socket.on('data', (chunk: Buffer) => resolve(chunk.toString()));
      crlf.socket.write('abcd\r\n');
    });
    expect(line).toBe('ab\r\n');
  });

  it('PX-02 reorder then sever-after: the reordered frame goes out right after, before the close', async () => {
    const dir = testDir();
    const server = await collectingServer(dir);
    const proxy = await createFrameProxy({
      listen: join(dir, 'p.sock'),
      upstream: server.path,
      framing: 'lines',
      faults: [
        { action: 'reorder', direction: 'c2s', frame: 1 },
        { action: 'sever-after', direction: 'c2s', frame: 2 },
      ],
    });
    onTestFinished(() => proxy.close());
    const socket = await client(proxy.address);
    socket.write('one\ntwo\nthree\n');
    await new Promise<void>((r) => socket.once('close', () => r()));
    await expect.poll(() => server.text()).toBe('two\none\n');
  });

  it('PX-13 record does not hold back a line nothing targets: a prompt without a newline arrives at once', async () => {
    const { proxy, socket, replies } = await through('lines', [], { record: true });
    const prompt = await new Promise<string>((resolve) => {
      socket.on('data', (chunk: Buffer) => resolve(chunk.toString()));
      socket.write('Password: ');
    });
    expect(prompt).toBe('Password: ');
    socket.write('hunter2\n');
    await replies.waitForFrames(1);
    await expect.poll(() => proxy.records().length).toBe(2);
    expect(proxy.records().map((r) => [r.direction, String(r.body)])).toEqual([
      ['c2s', 'Password: hunter2'],
      ['s2c', 'Password: hunter2'],
    ]);
  });
});

describe('PX-15 holds when connections end', () => {
  it('PX-15 PX-07 a reply held while both peers end their sides still reaches the client on release', async () => {
    const dir = testDir();
    const sockets: Socket[] = [];
    const server = createServer({ allowHalfOpen: true }, (s) => {
      sockets.push(s);
      s.on('error', () => {});
      s.on('data', () => s.end('pong\n')); // reply, then end
    });
    await new Promise<void>((r) => server.listen(join(dir, 's.sock'), r));
    onTestFinished(() => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    });
    const proxy = await createFrameProxy({
      listen: join(dir, 'p.sock'),
      upstream: join(dir, 's.sock'),
      framing: 'lines',
    });
    onTestFinished(() => proxy.close());
    const gate = proxy.hold({ direction: 's2c', frame: 1 });
    const socket = await client(proxy.address);
    const replies = createFrameReader(socket, { framing: 'lines' });
    socket.end('ping\n'); // request, then half-close
    await gate.waitHeld();
    await expect.poll(() => sockets[0]?.closed).toBe(true); // the server has gone
    gate.release();
    await replies.waitForEnd();
    expect(replies.texts()).toEqual(['pong']);
    expect(proxy.stats().s2c.frames).toBe(1);
  });

  it('PX-15 a frame whose connection closed while held is no longer counted as held', async () => {
    const { proxy, socket } = await through('lines', []);
    const gate = proxy.hold({ direction: 's2c' });
    socket.write('x\n');
    await gate.waitHeld();
    proxy.sever();
    await expect.poll(() => gate.held).toBe(0);
    expect(gate.caught).toBe(1);
  });
});

const JSONRPC = fileURLToPath(new URL('../fixtures/jsonrpc_stdio.py', import.meta.url));

describe('PX-14 proxyStdio at the edges', () => {
  it('PX-14 a child that writes 256 KiB to stderr does not block; the last 64 KiB are kept', async () => {
    const script = `import sys\nsys.stderr.write('e' * 262144 + 'END')\nsys.stderr.flush()\nexec(open(${JSON.stringify(JSONRPC)}).read())`;
    await using child = await proxyStdio(python3(), ['-c', script], { framing: 'lines' });
    const replies = createFrameReader(child.stdout, { framing: 'lines' });
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'echo', params: [1] })}\n`,
    );
    await replies.waitForFrames(1);
    await expect.poll(() => child.stderrTail().endsWith('END')).toBe(true);
    expect(child.stderrTail().length).toBeGreaterThanOrEqual(64 * 1024);
    expect(child.stderrTail().length).toBeLessThan(128 * 1024);
  });

  it('PX-14 SP-04 close() keeps to graceMs when a grandchild holds stdout open, and ends the grandchild too', async () => {
    const child = await proxyStdio('sh', ['-c', 'sleep 30 & echo $!; read x'], {
      framing: 'lines',
    });
    const replies = createFrameReader(child.stdout, { framing: 'lines' });
    const [pid] = await replies.waitForFrames(1);
    const grandchild = Number(String(pid));
    expect(isAlive(grandchild)).toBe(true);
    // `read` fails at the end of stdin: the shell exits 1 at once; the sleep it started holds stdout.
    // (Had close() waited for stdout to close, the grace would have run out: SIGKILL.)
    expect(await child.close({ graceMs: 2000 })).toEqual({ exitCode: 1, signal: null });
    await expect.poll(() => isAlive(grandchild), { timeout: 10_000 }).toBe(false);
  });

  it('PX-14 SP-10 a proxyStdio a script forgot does not keep Node alive, and its child is ended at exit', async () => {
    const index = fileURLToPath(new URL('../../dist/index.js', import.meta.url));
    const script = `const { proxyStdio } = await import(${JSON.stringify(index)}); const c = await proxyStdio('cat'); console.log(c.pid);`;
    const node = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    onTestFinished(() => {
      node.kill('SIGKILL');
    });
    let out = '';
    node.stdout.on('data', (chunk: Buffer) => {
      out += chunk;
    });
    const code = await new Promise((resolve) => node.once('close', resolve));
    expect(code).toBe(0);
    const cat = Number(out.trim());
    expect(cat).toBeGreaterThan(0);
    await expect.poll(() => isAlive(cat), { timeout: 10_000 }).toBe(false);
  });
});

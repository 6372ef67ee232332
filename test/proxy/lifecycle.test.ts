import { lstatSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  createFrameProxy,
  FrameTooLargeError,
  InvalidOptionError,
  ProxyListenError,
  ShimkitError,
  UpstreamConnectError,
  WaitTimeoutError,
} from '../../src/index.js';
import { listenError, resolveAddress, socketPathLimit } from '../../src/proxy/address.js';
import { frame } from '../helpers/frames.js';
import { completion, spawnTracked, testDir } from '../helpers/index.js';
import { openClient, rig } from '../helpers/proxy.js';

describe('oversized frames', () => {
  it('PX-01 a header over maxFrameBytes closes that connection both ways with a FrameTooLargeError, allocating no body', async () => {
    const { server, proxy, client } = await rig();
    const errors: Error[] = [];
    proxy.on('error', (e) => errors.push(e));
    const healthy = await client();
    const healthyUp = await server.nextConnection();
    const bad = await client();
    const badUp = await server.nextConnection();

    const before = process.memoryUsage().arrayBuffers;
    const header = Buffer.alloc(4);
    header.writeUInt32BE(0xfffffff0, 0); // declares ~4 GiB, far over the 64 MiB default
    bad.socket.write(Buffer.concat([frame('fine'), header, Buffer.alloc(100)]));
    badUp.socket.write(frame('to-client'));

    await badUp.until((c) => c.ended || c.closed, 'the server side to close');
    await bad.received.until((c) => c.ended || c.closed, 'the client side to close');
    expect(badUp.texts()).toEqual(['fine']);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(16 * 1024 * 1024);

    expect(errors).toHaveLength(1);
    const error = errors[0] as FrameTooLargeError;
    expect(error).toBeInstanceOf(FrameTooLargeError);
    expect(error).toMatchObject({
      code: 'ERR_SHIMKIT_FRAME_TOO_LARGE',
      connection: 2,
      direction: 'c2s',
      frame: 2,
      declaredLength: 0xfffffff0,
      maxFrameBytes: 64 * 1024 * 1024,
    });
    expect(error.message).toMatch(
      /^Frame 2 \(c2s\) on proxy connection 2 declares 4294967280 bytes, more than maxFrameBytes 67108864/,
    );
    expect(proxy.errors()).toEqual(errors);

    // The other connection carries on.
    healthy.socket.write(frame('still here'));
    await healthyUp.frameCount(1);
    healthyUp.socket.write(frame('and back'));
    await healthy.received.frameCount(1);
    expect(healthy.received.texts()).toEqual(['and back']);
  });

  it('PX-01 the FrameTooLargeError message counts in words (1 byte)', () => {
    const error = new FrameTooLargeError({
      connection: 1,
      direction: 'c2s',
      frame: 1,
      declaredLength: 1,
      maxFrameBytes: 0,
    });
    expect(error.message).toMatch(
      /^Frame 1 \(c2s\) on proxy connection 1 declares 1 byte, more than/,
    );
  });

  it('PX-01 maxFrameBytes is configurable and applies to s2c too', async () => {
    const { server, proxy, client } = await rig({ maxFrameBytes: 8 });
    const { received } = await client();
    const up = await server.nextConnection();
    up.socket.write(Buffer.concat([frame('12345678'), frame('123456789')]));
    await received.until((c) => c.ended || c.closed, 'the client to see the close');
    expect(received.texts()).toEqual(['12345678']);
    expect(proxy.errors()[0]).toMatchObject({
      direction: 's2c',
      frame: 2,
      declaredLength: 9,
      maxFrameBytes: 8,
    });
  });
});

describe('half-close', () => {
  it('PX-07 the client ends its write side: the server gets every frame and end-of-stream, and can still reply', async () => {
    const { server, client } = await rig();
    const { socket, received } = await client();
    const bodies = Array.from({ length: 50 }, (_, i) => `q${i}`);
    socket.end(Buffer.concat(bodies.map((b) => frame(b))));
    const up = await server.nextConnection();
    await up.until((c) => c.ended, 'end-of-stream at the server');
    expect(up.texts()).toEqual(bodies);
    up.socket.end(Buffer.concat([frame('answer 1'), frame('answer 2')]));
    await received.until((c) => c.ended, 'end-of-stream at the client');
    expect(received.texts()).toEqual(['answer 1', 'answer 2']);
  });
});

describe('sever now', () => {
  it('PX-09 proxy.sever() closes both sides of every connection; later connections work; counters stay readable', async () => {
    const { server, proxy, client } = await rig();
    const first = await client();
    const up1 = await server.nextConnection();
    first.socket.write(frame('before'));
    await up1.frameCount(1);
    proxy.sever();
    await up1.until((c) => c.ended || c.closed, 'the server side to see the close');
    await first.received.until((c) => c.ended || c.closed, 'the client side to see the close');
    expect(proxy.stats().c2s.frames).toBe(1);
    expect(proxy.connections[0]?.forwarded('c2s')).toBe(1);

    const second = await client();
    const up2 = await server.nextConnection();
    second.socket.write(frame('after'));
    await up2.frameCount(1);
    up2.socket.write(frame('reply'));
    await second.received.frameCount(1);
    expect(up2.texts()).toEqual(['after']);
    expect(proxy.forwarded('c2s')).toBe(2);
    expect(proxy.connections.map((c) => c.stats().c2s.frames)).toEqual([1, 1]);
  });

  it('PX-09 connection.sever() closes only that connection', async () => {
    const { server, proxy, client } = await rig();
    const a = await client();
    const upA = await server.nextConnection();
    const b = await client();
    const upB = await server.nextConnection();
    await expect.poll(() => proxy.connections.length).toBe(2);
    proxy.connections[0]?.sever({ mode: 'fin' });
    await upA.until((c) => c.ended || c.closed, 'connection 1 to close');
    b.socket.write(frame('b lives'));
    await upB.frameCount(1);
    expect(a.received.closed || a.received.ended).toBe(true);
    expect(proxy.connections.map((c) => c.open)).toEqual([false, true]);
  });

  it('PX-05 counters stay readable after close()', async () => {
    const { server, proxy, client } = await rig({
      faults: [{ action: 'duplicate', direction: 's2c', frame: 1 }],
    });
    const { received } = await client();
    const up = await server.nextConnection();
    up.socket.write(frame('x'));
    await received.frameCount(2);
    await proxy.close();
    expect(proxy.stats()).toMatchObject({
      c2s: { frames: 0, bytes: 0 },
      s2c: { frames: 2, bytes: 10 },
      faults: { duplicate: 1 },
      connections: [{ id: 1, s2c: { frames: 2, bytes: 10 } }],
    });
    expect(proxy.forwarded('s2c')).toBe(2);
  });
});

describe('upstream unavailable', () => {
  it('PX-08 the client connection is closed, an UpstreamConnectError names the address, and the proxy keeps accepting', async () => {
    const dir = testDir();
    const upstream = join(dir, 'server.sock');
    const proxy = await createFrameProxy({ listen: join(dir, 'proxy.sock'), upstream });
    onTestFinished(() => proxy.close());
    const errors: Error[] = [];
    proxy.on('error', (e) => errors.push(e));

    const first = await openClient(proxy.address);
    await first.received.until((c) => c.ended || c.closed, 'the client to be closed');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(UpstreamConnectError);
    expect(errors[0]).toMatchObject({
      upstream,
      connection: 1,
      code: 'ERR_SHIMKIT_UPSTREAM_CONNECT',
    });
    expect(errors[0]?.message).toContain(`cannot connect to upstream ${upstream} (`);

    // Once the server is up, the same proxy serves new clients.
    const server = createServer((s) => {
      s.on('error', () => {}); // reset when the proxy closes mid-echo
      s.pipe(s);
    });
    await new Promise<void>((r) => server.listen(upstream, r));
    onTestFinished(() => new Promise<void>((r) => server.close(() => r())));
    const second = await openClient(proxy.address);
    second.socket.write(frame('echo'));
    await second.received.frameCount(1);
    expect(second.received.texts()).toEqual(['echo']);
  });
});

describe('waits', () => {
  it('PX-12 waitForFrames times out with a WaitTimeoutError that counts in words (1 frame, 1 connection)', async () => {
    const { server, proxy, client } = await rig();
    const { socket } = await client();
    socket.write(frame('one'));
    await (await server.nextConnection()).frameCount(1);
    await expect(proxy.waitForFrames('c2s', 1)).resolves.toBeUndefined();
    const error = await proxy.waitForFrames('s2c', 1, { timeoutMs: 20 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WaitTimeoutError);
    expect((error as Error).message).toBe(
      `Proxy on ${proxy.address}: waited 20 ms for 1 frame s2c; forwarded so far: c2s 1, s2c 0 over 1 connection.`,
    );
    await expect(proxy.waitForFrames('c2s', 3, { timeoutMs: 20 })).rejects.toThrow(
      'waited 20 ms for 3 frames c2s; forwarded so far: c2s 1, s2c 0 over 1 connection.',
    );
  });

  it('PX-12 waitForFrames and forwarded check their arguments when called', async () => {
    const { proxy } = await rig();
    await expect(proxy.waitForFrames('both' as never, 1)).rejects.toThrow(
      'Expected the direction of proxy.waitForFrames() to be "c2s" or "s2c", got "both" (string).',
    );
    await expect(proxy.waitForFrames('c2s', -1)).rejects.toThrow(
      'Expected the frame count of proxy.waitForFrames() to be an integer >= 0, got -1 (number).',
    );
    await expect(proxy.waitForFrames('c2s', 1, { timeoutMs: -5 })).rejects.toThrow(
      'Expected the `timeoutMs` option of proxy.waitForFrames() to be an integer of milliseconds up to',
    );
    await expect(proxy.waitForFrames('c2s', 1, { timout: 5 } as never)).rejects.toThrow(
      'Unknown option `timout` for proxy.waitForFrames(). Did you mean `timeoutMs`?',
    );
    expect(() => proxy.forwarded('up' as never)).toThrow(
      'Expected the direction of proxy.forwarded() to be "c2s" or "s2c", got "up" (string).',
    );
  });
});

describe('bad options are rejected at creation', () => {
  // Each case gets its own dir; none of them gets as far as listening.
  const base = () => {
    const dir = testDir();
    return { listen: join(dir, 'never.sock'), upstream: join(dir, 'never-up.sock') };
  };
  const cases: Array<[string, object, string]> = [
    [
      'unknown action',
      { faults: [{ action: 'explode' }] },
      'Expected the `action` option of `faults[0]` to be "drop", "duplicate", "delay", "corrupt", "truncate", "reorder", "sever-mid-frame", "sever-after", "reset" or "slice", got "explode" (string).',
    ],
    [
      'frame 0',
      { faults: [{ action: 'drop', frame: 0 }] },
      'Expected the `frame` option of `faults[0]` to be a frame number >= 1, { every: k } or { from, to } (1-based), got 0 (number).',
    ],
    [
      'negative delay',
      { faults: [{ action: 'delay', delayMs: -5 }] },
      'Expected the `delayMs` option of `faults[0]` to be a number of milliseconds >= 0, got -5 (number).',
    ],
    [
      'missing delay',
      { faults: [{ action: 'delay' }] },
      'Expected the `delayMs` option of `faults[0]` to be a number of milliseconds >= 0 (required by "delay"), got undefined.',
    ],
    [
      'unknown direction',
      { faults: [{ action: 'drop', direction: 'up' }] },
      'Expected the `direction` option of `faults[0]` to be "c2s", "s2c" or "both", got "up" (string).',
    ],
    [
      'seed plan direction',
      { faults: { direction: 'sideways', drop_frame: 1 } },
      'Expected the `direction` option of `faults` to be "c2s", "s2c" or "both", got "sideways" (string).',
    ],
    [
      'seed plan typo',
      { faults: { direction: 'c2s', drop_fram: 1 } },
      'Unknown key `drop_fram` in `faults`. Did you mean `drop_frame`?',
    ],
    [
      'rule typo',
      { faults: [{ action: 'drop', frames: 2 }] },
      'Unknown key `frames` in `faults[0]`. Did you mean `frame`?',
    ],
    [
      'probability',
      { faults: [{ action: 'drop', probability: 1.5 }] },
      'Expected the `probability` option of `faults[0]` to be a number from 0 to 1, got 1.5 (number).',
    ],
    [
      'framing',
      { framing: 'u64' },
      'Expected the `framing` option of createFrameProxy() to be one of "u32be", "u32le", "u16be", "lines", "content-length", "raw", or a Framer { decode, encode }, got "u64" (string).',
    ],
    [
      'maxFrameBytes',
      { maxFrameBytes: -1 },
      'Expected the `maxFrameBytes` option of createFrameProxy() to be an integer from 0 to 4294967295, got -1 (number).',
    ],
    ['unknown option', { fault: [] }, 'Unknown option `fault` for createFrameProxy().'],
    [
      'listen',
      { listen: 42 },
      'Expected the `listen` option of createFrameProxy() to be an absolute Unix socket path or { host, port }, got 42 (number).',
    ],
    [
      'port',
      { listen: { host: '127.0.0.1', port: 70000 } },
      'with a port from 0 to 65535, got {"host":"127.0.0.1","port":70000} (object).',
    ],
    [
      'a relative listen path',
      { listen: 'proxy.sock' },
      'Expected the `listen` option of createFrameProxy() to be an absolute socket path, got "proxy.sock" (string): a relative path follows the cwd. Pass an absolute path, such as join(dir, "proxy.sock") with dir from mkdtemp.',
    ],
    [
      'a relative upstream path',
      { upstream: './run/server.sock' },
      'Expected the `upstream` option of createFrameProxy() to be an absolute socket path, got "./run/server.sock" (string)',
    ],
    [
      'a missing listen',
      { listen: undefined },
      'Missing the `listen` option of createFrameProxy(): pass an absolute Unix socket path or { host, port } (port 0 picks a free port).',
    ],
    [
      'a missing upstream',
      { upstream: undefined },
      'Missing the `upstream` option of createFrameProxy(): pass an absolute Unix socket path or { host, port }.',
    ],
    [
      'a framing that is an Object.prototype key',
      { framing: 'constructor' },
      'Expected the `framing` option of createFrameProxy() to be one of "u32be", "u32le", "u16be", "lines", "content-length", "raw", or a Framer { decode, encode }, got "constructor" (string).',
    ],
    [
      'seed',
      { seed: 1.5 },
      'Expected the `seed` option of createFrameProxy() to be an integer, got 1.5 (number).',
    ],
    [
      'queueLimitBytes',
      { queueLimitBytes: '1mb' },
      'Expected the `queueLimitBytes` option of createFrameProxy() to be an integer >= 0, got "1mb" (string).',
    ],
    [
      'clock',
      { clock: { now: () => 0 } },
      'Expected the `clock` option of createFrameProxy() to be an object with now(), setTimeout(fn, ms) and clearTimeout(handle), such as manualClock(), got {} (object).',
    ],
    [
      'upstream port 0',
      { upstream: { port: 0 } },
      'The `upstream` option of createFrameProxy() needs the real port of the server, not 0.',
    ],
  ];
  for (const [what, options, message] of cases) {
    it(`PX-02 rejects ${what} with a message naming the option, the value and the accepted set`, async () => {
      const paths = base();
      await expect(createFrameProxy({ ...paths, ...options } as never)).rejects.toThrow(
        InvalidOptionError,
      );
      await expect(createFrameProxy({ ...paths, ...options } as never)).rejects.toThrow(message);
    });
  }

  it('PX-02 createFrameProxy({}) and createFrameProxy() name the function and what it needs', async () => {
    await expect(createFrameProxy({} as never)).rejects.toThrow(
      new InvalidOptionError(
        'Missing the `listen` option of createFrameProxy(): pass an absolute Unix socket path or { host, port } (port 0 picks a free port).',
      ),
    );
    await expect((createFrameProxy as () => Promise<unknown>)()).rejects.toThrow(
      new InvalidOptionError(
        "createFrameProxy() needs options: at least `listen` and `upstream`, e.g. createFrameProxy({ listen: join(dir, 'proxy.sock'), upstream: serverPath }).",
      ),
    );
    await expect(createFrameProxy(null as never)).rejects.toThrow(
      'Expected the options of createFrameProxy() to be an object, got null.',
    );
  });

  it('PX-10 listening in a dir that does not exist is a ProxyListenError naming the path and what to do', async () => {
    const dir = join(testDir(), 'not-made');
    const listen = join(dir, 'proxy.sock');
    const error = await createFrameProxy({ listen, upstream: join(dir, 'up.sock') }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ProxyListenError);
    expect(error).toBeInstanceOf(ShimkitError);
    expect(error).toMatchObject({
      code: 'ERR_SHIMKIT_PROXY_LISTEN',
      address: listen,
      message: `Cannot listen on ${listen}: the dir ${dir} does not exist (${(error as ProxyListenError).errno}). Create it first (mkdirSync(dir, { recursive: true })), or listen in a dir made with mkdtemp.`,
    });
    // libuv reports a missing dir as EACCES (as Windows does); ENOENT would do as well.
    expect(['EACCES', 'ENOENT']).toContain((error as ProxyListenError).errno);
    expect((error as Error).cause).toMatchObject({ code: (error as ProxyListenError).errno });
  });

  it('PX-10 listening under a plain file is a ProxyListenError (ENOTDIR)', async () => {
    const file = join(testDir(), 'a-file');
    writeFileSync(file, 'x');
    const listen = join(file, 'proxy.sock');
    await expect(createFrameProxy({ listen, upstream: join(file, 'up.sock') })).rejects.toThrow(
      new ProxyListenError(
        `Cannot listen on ${listen}: ${file} is not a dir, or a part of it is not (ENOTDIR). Listen in a dir made with mkdtemp.`,
        listen,
        'ENOTDIR',
        undefined,
      ),
    );
  });

  it('PX-10 a TCP port in use is a ProxyListenError that points at port 0', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    onTestFinished(() => new Promise<void>((r) => taken.close(() => r())));
    const { port } = taken.address() as { port: number };
    const error = await createFrameProxy({
      listen: { host: '127.0.0.1', port },
      upstream: { port: 1 },
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'ERR_SHIMKIT_PROXY_LISTEN',
      address: `127.0.0.1:${port}`,
      errno: 'EADDRINUSE',
      message: `Cannot listen on 127.0.0.1:${port}: the port is in use (EADDRINUSE). Use port 0 to pick a free one, then connect to proxy.address.`,
    });
  });

  it('PX-10 listen failures this host cannot produce on cue still get a message that says what to do', () => {
    const errno = (code: string) => Object.assign(new Error(`listen ${code}`), { code });
    const locked = testDir(); // as root, the host never refuses; the dir exists, the error is made up
    const unix = { kind: 'unix', path: join(locked, 'proxy.sock') } as const;
    const tcp = { kind: 'tcp', host: '127.0.0.1', port: 80 } as const;
    expect(listenError(unix, errno('EACCES')).message).toBe(
      `Cannot listen on ${unix.path}: no permission to create a socket in ${locked} (EACCES). Listen in a dir you can write, such as one made with mkdtemp.`,
    );
    expect(listenError(tcp, errno('EACCES')).message).toBe(
      'Cannot listen on 127.0.0.1:80: permission denied (EACCES); ports below 1024 need privileges. Use port 0 to pick a free one.',
    );
    expect(listenError({ ...tcp, host: '192.0.2.1' }, errno('EADDRNOTAVAIL')).message).toBe(
      'Cannot listen on 192.0.2.1:80: the host is not an address of this machine (EADDRNOTAVAIL). Use a local one, such as 127.0.0.1.',
    );
    expect(listenError(unix, errno('EMFILE'))).toMatchObject({
      errno: 'EMFILE',
      message: `Cannot listen on ${unix.path}: listen EMFILE.`,
    });
  });

  it('PX-10 a relative path is refused', () => {
    expect(() => resolveAddress('tmp/p.sock', 'listen', 'x()', 'linux')).toThrow(
      'Expected the `listen` option of x() to be an absolute socket path, got "tmp/p.sock" (string)',
    );
    expect(() => resolveAddress('/tmp/p.sock', 'upstream', 'x()', 'linux')).not.toThrow();
  });

  it('PX-10 Windows takes named pipes and refuses file paths with a clear error; elsewhere a pipe is refused', () => {
    expect(resolveAddress('\\\\.\\pipe\\shimkit-1', 'listen', 'x()', 'win32')).toEqual({
      kind: 'pipe',
      path: '\\\\.\\pipe\\shimkit-1',
    });
    expect(resolveAddress('\\\\?\\PIPE\\a b', 'upstream', 'x()', 'win32').kind).toBe('pipe');
    for (const file of ['C:\\tmp\\p.sock', 'tmp\\p.sock', '/tmp/p.sock']) {
      expect(() => resolveAddress(file, 'listen', 'x()', 'win32')).toThrow(
        /is a file path; on Windows Node listens and connects on named pipes, not socket files\. Pass a pipe name .*\\\\\.\\pipe\\shimkit-/,
      );
    }
    expect(() =>
      resolveAddress(`\\\\.\\pipe\\${'x'.repeat(300)}`, 'listen', 'x()', 'win32'),
    ).toThrow(/named pipe of 309 characters; Windows takes at most 256/);
    expect(() => resolveAddress('\\\\.\\pipe\\x', 'upstream', 'x()', 'linux')).toThrow(
      /is a Windows named pipe, and this is linux: pass an absolute Unix socket path/,
    );
    expect(() => resolveAddress(undefined, 'listen', 'x()', 'win32')).toThrow(
      /pass a named pipe path \(\\\\\.\\pipe\\name\) or \{ host, port \}/,
    );
  });

  it('PX-10 a socket path longer than the OS limit is rejected with both lengths', async () => {
    const long = `/tmp/${'x'.repeat(200)}.sock`;
    await expect(createFrameProxy({ listen: long, upstream: base().upstream })).rejects.toThrow(
      `The \`listen\` socket path is ${Buffer.byteLength(long)} bytes; the limit on ${process.platform} is ${socketPathLimit(process.platform)}: ${long}.`,
    );
    expect(socketPathLimit('linux')).toBe(107);
    expect(socketPathLimit('darwin')).toBe(103);
  });

  it('PX-10 a stale socket file at the listen path is replaced; a live one or a plain file is an error', async () => {
    const dir = testDir();
    const path = join(dir, 'p.sock');
    // A socket left behind by a process that died while listening on it.
    const dead = spawnTracked(process.execPath, [
      '-e',
      `require('net').createServer().listen(process.argv[1], () => console.log('listening'))`,
      path,
    ]);
    await new Promise((ready) => dead.stdout?.once('data', ready));
    dead.kill('SIGKILL');
    await completion(dead);
    expect(lstatSync(path).isSocket()).toBe(true);
    const proxy = await createFrameProxy({ listen: path, upstream: join(dir, 'up.sock') });
    onTestFinished(() => proxy.close());
    await expect(
      createFrameProxy({ listen: path, upstream: join(dir, 'up.sock') }),
    ).rejects.toThrow(`Cannot listen on ${path}: another process is listening there.`);
    const file = join(dir, 'plain');
    writeFileSync(file, 'x');
    await expect(
      createFrameProxy({ listen: file, upstream: join(dir, 'up.sock') }),
    ).rejects.toThrow(`Cannot listen on ${file}: a file that is not a socket is in the way.`);
  });
});

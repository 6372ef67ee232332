// PX-13 recording and the timeline, PX-15 hold and release, PX-16 network
// shapes (slice, bandwidth, per-connection probability, FIN or RST per rule),
// through the real proxy on real sockets.
import { createServer, type Socket, connect as tcpConnect } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  createFrameProxy,
  type FrameRecord,
  InvalidOptionError,
  manualClock,
  WaitTimeoutError,
} from '../../src/index.js';
import { FrameCollector, frame } from '../helpers/frames.js';
import { rig } from '../helpers/proxy.js';

const send = (socket: { write(b: Buffer): boolean }, bodies: Array<string | Buffer>) =>
  socket.write(Buffer.concat(bodies.map((b) => frame(b))));

describe('PX-15 hold and release', () => {
  it('PX-15 a held reply stays in flight, later replies queue behind it in order, requests flow; release lets them go', async () => {
    const { server, proxy, client } = await rig();
    const gate = proxy.hold({ direction: 's2c', frame: 1 });
    const { socket, received } = await client();
    send(socket, ['ping']);
    const upstream = await server.nextConnection();
    await upstream.frameCount(1);
    upstream.socket.write(frame('pong'));
    await gate.waitHeld();
    expect(gate.held).toBe(1);
    upstream.socket.write(frame('second')); // FIFO: waits behind the held frame
    send(socket, ['more']); // the other direction is not held
    await upstream.frameCount(2);
    expect(upstream.texts()).toEqual(['ping', 'more']);
    await proxy.waitForFrames('c2s', 2);
    expect(received.frames).toHaveLength(0);
    expect(proxy.forwarded('s2c')).toBe(0);
    gate.release();
    await received.frameCount(2);
    expect(received.texts()).toEqual(['pong', 'second']);
    expect([gate.held, gate.caught, gate.released]).toEqual([0, 1, true]);
    expect(proxy.stats().faults).toEqual({}); // a hold is not a fault
    // Released: frame 1 of the next connection is not caught.
    const second = await client();
    send(second.socket, ['again']);
    const upstream2 = await server.nextConnection();
    await upstream2.frameCount(1);
    upstream2.socket.write(frame('free'));
    await second.received.frameCount(1);
    expect(gate.caught).toBe(1);
  });

  it('PX-15 waitHeld times out with what it waited for; proxy.release() opens every hold; selectors are checked', async () => {
    const { server, proxy, client } = await rig();
    const never = proxy.hold({ direction: 'c2s', frame: 9 });
    await expect(never.waitHeld(1, { timeoutMs: 50 })).rejects.toThrow(
      new WaitTimeoutError(
        'hold.waitHeld(): waited 50 ms for 1 frame matching {"direction":"c2s","frame":9}; caught 0.',
      ),
    );
    const all = proxy.hold({ direction: 'c2s' });
    const { socket } = await client();
    send(socket, ['a', 'b', 'c']);
    await all.waitHeld(3);
    const upstream = await server.nextConnection();
    expect(upstream.frames).toHaveLength(0);
    proxy.release();
    await upstream.frameCount(3);
    expect(upstream.texts()).toEqual(['a', 'b', 'c']);
    expect(never.released).toBe(true);
    all.release(); // again: nothing happens
    expect(() => proxy.hold({ direction: 'up' } as never)).toThrow(
      'Expected the `direction` option of `proxy.hold()` to be "c2s", "s2c" or "both", got "up" (string).',
    );
    expect(() => proxy.hold({ action: 'drop' } as never)).toThrow(
      'Unknown key `action` in `proxy.hold()`.',
    );
  });
});

describe('PX-13 record and timeline', () => {
  it('PX-13 record: true keeps each frame with its time, size, start and fault; timeline() renders them', async () => {
    const clock = manualClock({ now: 1000 });
    const { server, proxy, client } = await rig({
      clock,
      record: true,
      faults: [
        { action: 'drop', direction: 'c2s', frame: 2 },
        { action: 'delay', direction: 's2c', frame: 1, delayMs: 50 },
      ],
    });
    const seen: FrameRecord[] = [];
    proxy.on('record', (r: FrameRecord) => seen.push(r));
    const { socket, received } = await client();
    send(socket, ['{"method":"ping"}', 'lost']);
    const upstream = await server.nextConnection();
    await upstream.frameCount(1);
    clock.advance(12.3);
    send(socket, [Buffer.from([0, 1, 2, 255]), 'x'.repeat(50)]);
    await upstream.frameCount(3);
    upstream.socket.write(frame('pong'));
    await expect.poll(() => seen.length).toBe(5);
    clock.advance(50);
    await received.frameCount(1);
    expect(proxy.timeline()).toBe(
      [
        '     0.0 ms  c2s #1  conn 1  17 B  {"method":"ping"}',
        '     0.0 ms  c2s #2  conn 1  4 B  lost  DROPPED',
        '    12.3 ms  c2s #3  conn 1  4 B  <00 01 02 ff>',
        `    12.3 ms  c2s #4  conn 1  50 B  ${'x'.repeat(40)}…`,
        '    12.3 ms  s2c #1  conn 1  4 B  pong  DELAYED 50 ms',
      ].join('\n'),
    );
    const records = proxy.records();
    expect(records.map((r) => [r.direction, r.frame, r.fault])).toEqual([
      ['c2s', 1, undefined],
      ['c2s', 2, 'drop'],
      ['c2s', 3, undefined],
      ['c2s', 4, undefined],
      ['s2c', 1, 'delay'],
    ]);
    expect(records[2]?.body).toEqual(Buffer.from([0, 1, 2, 255]));
    expect(seen.map((r) => r.line)).toEqual(records.map((r) => r.line));
  });

  it('PX-13 the record is capped: the oldest frames go and the timeline says so; bodies are cut; misuse is explained', async () => {
    const { proxy, client, server } = await rig({ record: { maxFrames: 2, maxBodyBytes: 3 } });
    const { socket } = await client();
    send(socket, ['aaaa', 'bbbb', 'cccc', 'dddd', 'eeee']);
    await proxy.waitForFrames('c2s', 5);
    await (await server.nextConnection()).frameCount(5);
    const untimed = proxy.timeline().replace(/^ *\d+\.\d ms/gm, 'T');
    expect(untimed).toBe(
      [
        '(3 earlier frames are not shown: record.maxFrames is 2)',
        'T  c2s #4  conn 1  4 B  ddd…', // maxBodyBytes 3
        'T  c2s #5  conn 1  4 B  eee…',
      ].join('\n'),
    );
    expect(proxy.records().map((r) => [r.length, String(r.body)])).toEqual([
      [4, 'ddd'],
      [4, 'eee'],
    ]);
    const plain = await rig();
    expect(() => plain.proxy.timeline()).toThrow(
      new InvalidOptionError(
        'proxy.timeline() needs a proxy made with `record: true` (createFrameProxy({ …, record: true })).',
      ),
    );
    await expect(rig({ record: { maxFrames: 0 } })).rejects.toThrow(
      'Expected the `record.maxFrames` option of createFrameProxy() to be an integer >= 1, got 0 (number).',
    );
  });
});

describe('PX-16 network shapes', () => {
  it('PX-16 slice writes a frame in pieces, spaced on the clock, so the peer must reassemble it', async () => {
    const clock = manualClock();
    const { server, client } = await rig({
      clock,
      faults: [{ action: 'slice', direction: 'c2s', frame: 2, sliceBytes: 3, delayMs: 10 }],
    });
    const { socket } = await client();
    send(socket, ['one', 'sliced!', 'three']);
    const upstream = await server.nextConnection();
    const bytes = () =>
      upstream.frames.reduce((n, f) => n + 4 + f.length, 0) + upstream.partial.length;
    // Frame 1 whole, then the first 3 bytes of frame 2 (4 + 7 = 11 bytes: pieces of 3, 3, 3, 2).
    await upstream.until((c) => bytes() === 7 + 3 && c.frames.length === 1, 'the first piece');
    for (const total of [13, 16]) {
      clock.advance(10);
      await upstream.until(() => bytes() === total, `${total} bytes`);
    }
    clock.advance(10); // the last piece, then frame 3 behind it
    await upstream.frameCount(3);
    expect(upstream.texts()).toEqual(['one', 'sliced!', 'three']);
  });

  it('PX-16 bandwidth paces a direction to bytes per second on the clock; the other direction runs free', async () => {
    const clock = manualClock();
    const { server, client } = await rig({ clock, bandwidth: { s2c: 1000 } }); // 20-byte pieces, 20 ms each
    const { socket, received } = await client();
    send(socket, ['hi']);
    const upstream = await server.nextConnection();
    await upstream.frameCount(1); // c2s is not paced
    upstream.socket.write(frame(Buffer.alloc(96, 0x61))); // 100 bytes: 5 pieces
    const got = () => received.frames.length * 100 + received.partial.length;
    await received.until(() => got() === 20, 'the first 20 bytes');
    clock.advance(19);
    expect(got()).toBe(20);
    for (const total of [40, 60, 80, 100]) {
      clock.advance(total === 40 ? 1 : 20);
      await received.until(() => got() === total, `${total} bytes`);
    }
    expect(received.frames).toHaveLength(1);
    await expect(rig({ bandwidth: -5 })).rejects.toThrow(
      'Expected the `bandwidth` option of createFrameProxy() to be a number of bytes per second > 0, got -5 (number).',
    );
  });

  it('PX-16 PX-04 probability per connection: each connection is hit on every frame or on none, the same for the same seed', async () => {
    const pattern = async () => {
      const { proxy, client } = await rig({
        seed: 7,
        faults: [{ action: 'drop', direction: 'c2s', probability: 0.5, per: 'connection' }],
      });
      for (let i = 0; i < 8; i++) send((await client()).socket, ['a', 'b', 'c']);
      await expect.poll(() => proxy.stats().c2s.frames + (proxy.stats().faults.drop ?? 0)).toBe(24);
      return proxy.stats().connections.map((c) => c.c2s.frames);
    };
    const first = await pattern();
    expect(first.every((n) => n === 0 || n === 3)).toBe(true);
    expect(first).toContain(0);
    expect(first).toContain(3);
    expect(await pattern()).toEqual(first);
  });

  it('PX-16 sever-after with mode rst resets the client over TCP; the default FIN ends it cleanly', async () => {
    const sockets: Socket[] = [];
    const server = createServer((s) => {
      sockets.push(s);
      s.on('error', () => {});
      s.resume();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    onTestFinished(() => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    });
    const port = (server.address() as { port: number }).port;
    const outcome = async (mode: 'fin' | 'rst' | undefined) => {
      const proxy = await createFrameProxy({
        listen: { port: 0 },
        upstream: { port },
        faults: [{ action: 'sever-after', direction: 'c2s', frame: 1, ...(mode ? { mode } : {}) }],
      });
      onTestFinished(() => proxy.close());
      const socket = tcpConnect(proxy.address.port, '127.0.0.1');
      onTestFinished(() => {
        socket.destroy();
      });
      const collector = new FrameCollector(socket);
      socket.write(frame('bye'));
      await collector.until((c) => c.closed, 'the close');
      return (collector.error as NodeJS.ErrnoException | undefined)?.code ?? 'clean end';
    };
    expect(await outcome('rst')).toBe('ECONNRESET');
    expect(await outcome(undefined)).toBe('clean end');
  });
});

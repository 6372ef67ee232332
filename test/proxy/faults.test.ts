import { createServer, connect as tcpConnect } from 'node:net';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { createFrameProxy, manualClock } from '../../src/index.js';
import { FrameCollector, frame } from '../helpers/frames.js';
import { rig } from '../helpers/proxy.js';

const five = ['one', 'two', 'three', 'four', 'five'];
const send = (socket: { write(b: Buffer): boolean }, bodies: string[]) =>
  socket.write(Buffer.concat(bodies.map((b) => frame(b))));

describe('fault actions hit exactly the targeted frame', () => {
  it('PX-02 drop removes only frame 2 c2s; the other direction is untouched', async () => {
    const { server, proxy, client } = await rig({
      faults: [{ action: 'drop', direction: 'c2s', frame: 2 }],
    });
    const { socket, received } = await client();
    send(socket, five);
    const upstream = await server.nextConnection();
    await upstream.frameCount(4);
    await proxy.waitForFrames('c2s', 4);
    expect(upstream.texts()).toEqual(['one', 'three', 'four', 'five']);
    upstream.socket.write(Buffer.concat([frame('a'), frame('b'), frame('c')]));
    await received.frameCount(3);
    expect(received.texts()).toEqual(['a', 'b', 'c']);
    const stats = proxy.stats();
    expect(stats.faults).toEqual({ drop: 1 });
    expect([stats.c2s.frames, stats.s2c.frames]).toEqual([4, 3]);
    expect(stats.c2s.bytes).toBe(4 * 4 + 'onethreefourfive'.length);
  });

  it('PX-02 duplicate sends frame 2 twice', async () => {
    const { server, proxy, client } = await rig({
      faults: [{ action: 'duplicate', direction: 'c2s', frame: 2 }],
    });
    const { socket } = await client();
    send(socket, five);
    const upstream = await server.nextConnection();
    await upstream.frameCount(6);
    expect(upstream.texts()).toEqual(['one', 'two', 'two', 'three', 'four', 'five']);
    expect(proxy.forwarded('c2s')).toBe(6);
  });

  it('PX-02 PX-12 delay holds frame 2 and everything behind it (FIFO) until the injected clock advances; s2c flows meanwhile', async () => {
    const clock = manualClock();
    const { server, proxy, client } = await rig({
      clock,
      faults: [{ action: 'delay', direction: 'c2s', frame: 2, delayMs: 500 }],
    });
    const { socket, received } = await client();
    send(socket, five);
    const upstream = await server.nextConnection();
    await upstream.frameCount(1);
    // The other direction is not delayed: a reply crosses while c2s frames 2–5 wait.
    upstream.socket.write(frame('reply'));
    await received.frameCount(1);
    expect(received.texts()).toEqual(['reply']);
    expect(upstream.texts()).toEqual(['one']);
    expect(proxy.forwarded('c2s')).toBe(1);
    expect(clock.pending()).toBe(1);
    clock.advance(499);
    expect(proxy.forwarded('c2s')).toBe(1);
    clock.advance(1);
    await upstream.frameCount(5);
    expect(upstream.texts()).toEqual(five);
  });

  it('PX-12 delay works under vitest fake timers with the default clock', async () => {
    const { server, proxy, client } = await rig({
      faults: [{ action: 'delay', direction: 'c2s', frame: 1, delayMs: 60_000 }],
    });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const { socket } = await client();
    send(socket, ['held', 'behind']);
    const upstream = await server.nextConnection();
    await expect.poll(() => vi.getTimerCount(), { interval: 5, timeout: 5000 }).toBe(1);
    expect(upstream.frames).toEqual([]);
    vi.advanceTimersByTime(60_000); // a minute passes, instantly
    vi.useRealTimers();
    await upstream.frameCount(2);
    expect(upstream.texts()).toEqual(['held', 'behind']);
    expect(proxy.forwarded('c2s')).toBe(2);
  });

  it('PX-02 corrupt flips body bits of frame 2 only, header intact, reproducibly from the seed', async () => {
    const body = Buffer.alloc(64, 0);
    const run = async (seed: number) => {
      const { server, client } = await rig({
        seed,
        faults: [{ action: 'corrupt', direction: 'c2s', frame: 2, bits: 3 }],
      });
      const { socket } = await client();
      socket.write(Buffer.concat([frame(body), frame(body), frame(body)]));
      const upstream = await server.nextConnection();
      await upstream.frameCount(3);
      return upstream.frames;
    };
    const [a1, a2, a3] = await run(7);
    expect(a1).toEqual(body);
    expect(a3).toEqual(body);
    expect(a2?.length).toBe(64); // the header still says 64
    const flipped = [...(a2 as Buffer)].reduce((n, byte) => n + popcount(byte), 0);
    expect(flipped).toBe(3);
    const again = await run(7);
    expect(again[1]).toEqual(a2);
    const other = await run(8);
    expect(other[1]).not.toEqual(a2);
  });

  it('PX-02 truncate shortens frame 2 to keepBytes with a matching header; the stream stays in step', async () => {
    const { server, client } = await rig({
      faults: [{ action: 'truncate', direction: 'c2s', frame: 2, keepBytes: 2 }],
    });
    const { socket } = await client();
    send(socket, five);
    const upstream = await server.nextConnection();
    await upstream.frameCount(5);
    expect(upstream.texts()).toEqual(['one', 'tw', 'three', 'four', 'five']);
  });

  it('PX-02 reorder swaps frame 2 with the next one', async () => {
    const { server, client } = await rig({
      faults: [{ action: 'reorder', direction: 'c2s', frame: 2 }],
    });
    const { socket } = await client();
    send(socket, five);
    const upstream = await server.nextConnection();
    await upstream.frameCount(5);
    expect(upstream.texts()).toEqual(['one', 'three', 'two', 'four', 'five']);
  });

  it('PX-02 reorder of the last frame before end-of-stream still delivers it', async () => {
    const { server, client } = await rig({
      faults: [{ action: 'reorder', direction: 'c2s', frame: 2 }],
    });
    const { socket } = await client();
    send(socket, ['one', 'two']);
    socket.end();
    const upstream = await server.nextConnection();
    await upstream.until((c) => c.ended, 'end of stream');
    expect(upstream.texts()).toEqual(['one', 'two']);
  });

  it('PX-02 sever-mid-frame forwards the header and half the body of frame 3, then closes both sides', async () => {
    const { server, proxy, client } = await rig({
      faults: [{ action: 'sever-mid-frame', direction: 'c2s', frame: 3 }],
    });
    const { socket, received } = await client();
    send(socket, ['one', 'two', 'three-three', 'four']);
    const upstream = await server.nextConnection();
    await upstream.until((c) => c.ended, 'the server to see end-of-stream');
    expect(upstream.texts()).toEqual(['one', 'two']);
    expect(upstream.partial).toEqual(
      Buffer.concat([Buffer.from([0, 0, 0, 11]), Buffer.from('three')]),
    );
    await received.until((c) => c.ended || c.closed, 'the client to see the close');
    expect(proxy.forwarded('c2s')).toBe(2);
    expect(proxy.stats().faults).toEqual({ 'sever-mid-frame': 1 });
  });

  it('PX-02 sever-after forwards frame 2 whole, then closes both sides', async () => {
    const { server, client } = await rig({
      faults: [{ action: 'sever-after', direction: 'c2s', frame: 2 }],
    });
    const { socket, received } = await client();
    send(socket, five);
    const upstream = await server.nextConnection();
    await upstream.until((c) => c.ended, 'end of stream');
    expect(upstream.texts()).toEqual(['one', 'two']);
    expect(upstream.partial.length).toBe(0);
    await received.until((c) => c.ended || c.closed, 'the client to see the close');
  });

  it('PX-02 reset sends RST to both sides over TCP at frame 2', async () => {
    const upstreamSockets: FrameCollector[] = [];
    const server = createServer({ allowHalfOpen: true }, (s) =>
      upstreamSockets.push(new FrameCollector(s)),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    onTestFinished(() => {
      for (const u of upstreamSockets) u.socket.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    });
    const port = (server.address() as { port: number }).port;
    const proxy = await createFrameProxy({
      listen: { host: '127.0.0.1', port: 0 },
      upstream: { host: '127.0.0.1', port },
      faults: [{ action: 'reset', direction: 'c2s', frame: 2 }],
    });
    onTestFinished(() => proxy.close());
    const address = proxy.address as { host: string; port: number };
    expect(address.port).toBeGreaterThan(0);
    const socket = tcpConnect(address.port, address.host);
    const received = new FrameCollector(socket);
    onTestFinished(() => {
      socket.destroy();
    });
    await new Promise((r) => socket.once('connect', r));
    send(socket, five);
    await received.until((c) => c.closed, 'the client to be closed');
    expect((received.error as NodeJS.ErrnoException | undefined)?.code).toBe('ECONNRESET');
    const upstream = upstreamSockets[0] as FrameCollector;
    await upstream.until((c) => c.closed, 'the server side to be closed');
    expect((upstream.error as NodeJS.ErrnoException | undefined)?.code).toBe('ECONNRESET');
    expect(upstream.texts()).toEqual(['one']);
  });
});

describe('targeting', () => {
  it('PX-02 a rule for connection 2 leaves connection 1 alone', async () => {
    const { server, client } = await rig({
      faults: [{ action: 'drop', direction: 'c2s', connection: 2, frame: 1 }],
    });
    const first = await client();
    const up1 = await server.nextConnection();
    send(first.socket, ['a', 'b']);
    await up1.frameCount(2);
    const second = await client();
    const up2 = await server.nextConnection();
    send(second.socket, ['a', 'b']);
    await up2.frameCount(1);
    expect(up1.texts()).toEqual(['a', 'b']);
    expect(up2.texts()).toEqual(['b']);
  });

  it('PX-02 frame selectors { every } and { from, to }, and direction "both"', async () => {
    const bodies = Array.from({ length: 9 }, (_, i) => `f${i + 1}`);
    const every = await rig({
      faults: [{ action: 'drop', direction: 'c2s', frame: { every: 3 } }],
    });
    const c1 = await every.client();
    send(c1.socket, bodies);
    const u1 = await every.server.nextConnection();
    await u1.frameCount(6);
    expect(u1.texts()).toEqual(['f1', 'f2', 'f4', 'f5', 'f7', 'f8']);

    const range = await rig({
      faults: [{ action: 'drop', direction: 'both', frame: { from: 2, to: 4 } }],
    });
    const c2 = await range.client();
    send(c2.socket, bodies);
    const u2 = await range.server.nextConnection();
    await u2.frameCount(6);
    expect(u2.texts()).toEqual(['f1', 'f5', 'f6', 'f7', 'f8', 'f9']);
    send(u2.socket, bodies);
    await c2.received.frameCount(6);
    expect(c2.received.texts()).toEqual(['f1', 'f5', 'f6', 'f7', 'f8', 'f9']);
  });

  it('PX-02 setFaults() changes the plan at run time', async () => {
    const { server, proxy, client } = await rig();
    const { socket } = await client();
    const upstream = await server.nextConnection();
    send(socket, ['a', 'b']);
    await upstream.frameCount(2);
    proxy.setFaults([{ action: 'drop', direction: 'c2s', frame: 3 }]);
    send(socket, ['c', 'd']);
    await upstream.frameCount(3);
    expect(upstream.texts()).toEqual(['a', 'b', 'd']);
  });
});

describe('the seed plan and reproducible randomness', () => {
  it('PX-03 the seed plan { direction, drop_frame, duplicate_frame, sever_mid_frame, delay } means the same rules', async () => {
    const plan = await rig({ faults: { direction: 'c2s', drop_frame: 2, duplicate_frame: 3 } });
    const rules = await rig({
      faults: [
        { action: 'drop', direction: 'c2s', frame: 2 },
        { action: 'duplicate', direction: 'c2s', frame: 3 },
      ],
    });
    const outcomes: string[][] = [];
    for (const r of [plan, rules]) {
      const { socket } = await r.client();
      send(socket, five);
      const upstream = await r.server.nextConnection();
      await upstream.frameCount(5);
      outcomes.push(upstream.texts());
    }
    expect(outcomes[0]).toEqual(['one', 'three', 'three', 'four', 'five']);
    expect(outcomes[1]).toEqual(outcomes[0]);

    const clock = manualClock();
    const delayed = await rig({
      clock,
      faults: { direction: 's2c', delay: '250ms', sever_mid_frame: 9 },
    });
    const { received } = await delayed.client();
    const upstream = await delayed.server.nextConnection();
    upstream.socket.write(frame('late'));
    await expect.poll(() => clock.pending()).toBe(1);
    expect(received.frames).toEqual([]);
    clock.advance(250);
    await received.frameCount(1);
    expect(received.texts()).toEqual(['late']);
  });

  it('PX-04 probability with a seed: the same seed and traffic give the same faults', async () => {
    const bodies = Array.from({ length: 200 }, (_, i) => `m${i}`);
    const delivered = async (seed: number) => {
      const r = await rig({
        seed,
        faults: [{ action: 'drop', direction: 'c2s', probability: 0.3 }],
      });
      const { socket } = await r.client();
      send(socket, bodies);
      socket.end();
      const upstream = await r.server.nextConnection();
      await upstream.until((c) => c.ended, 'end of stream');
      return { texts: upstream.texts(), dropped: r.proxy.stats().faults.drop ?? 0 };
    };
    const first = await delivered(42);
    const second = await delivered(42);
    const other = await delivered(43);
    expect(second).toEqual(first);
    expect(first.dropped).toBe(200 - first.texts.length);
    expect(first.dropped).toBeGreaterThan(30); // about 30 % of 200
    expect(first.dropped).toBeLessThan(90);
    expect(other.texts).not.toEqual(first.texts);
  });
});

function popcount(byte: number): number {
  let n = 0;
  for (let b = byte; b; b >>= 1) n += b & 1;
  return n;
}

// What the proxy does when a source ends its stream: a reordered frame still
// held goes out before a frame cut short, a rule that targets a frame cut
// short says so in the counters and the timeline, and no wait outlives its
// proxy or its stdio child. Every peer is a Python process of its own.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  createFrameProxy,
  DisposedError,
  encodeFrame,
  type FaultRule,
  type FrameProxyOptions,
  type Framer,
  type Framing,
  proxyStdio,
  StreamEndedError,
} from '../../src/index.js';
import { python3, spawnTracked, testDir } from '../helpers/index.js';
import { Lines } from '../helpers/lines.js';

const PEER = fileURLToPath(new URL('../fixtures/eos_peer.py', import.meta.url));

/** A 1-byte length, then the body. */
const u8: Framer = {
  name: 'u8',
  decode(buffer) {
    const frames: Buffer[] = [];
    let at = 0;
    while (at < buffer.length && at + 1 + (buffer[at] as number) <= buffer.length) {
      frames.push(buffer.subarray(at + 1, at + 1 + (buffer[at] as number)));
      at += 1 + (buffer[at] as number);
    }
    return { frames, rest: buffer.subarray(at) };
  },
  encode: (frame) => Buffer.concat([Buffer.from([frame.length]), frame]),
};

interface Case {
  framing: Framing | Framer;
  /** A frame cut short: what the source sent of it before it ended. */
  partial: Buffer;
  /** Body bytes of it that arrived, and the length it declares (undefined: no end in sight). */
  arrived: number;
  declared: number | undefined;
}

const u32 = (length: number, le = false) => {
  const b = Buffer.alloc(4);
  if (le) b.writeUInt32LE(length);
  else b.writeUInt32BE(length);
  return b;
};

const CASES: Case[] = [
  {
    framing: 'u32be',
    partial: Buffer.concat([u32(10), Buffer.from('abc')]),
    arrived: 3,
    declared: 10,
  },
  { framing: 'u32be', partial: Buffer.from([0, 0]), arrived: 0, declared: undefined },
  {
    framing: 'u32le',
    partial: Buffer.concat([u32(10, true), Buffer.from('abc')]),
    arrived: 3,
    declared: 10,
  },
  {
    framing: 'u16be',
    partial: Buffer.concat([Buffer.from([0, 10]), Buffer.from('abc')]),
    arrived: 3,
    declared: 10,
  },
  { framing: 'lines', partial: Buffer.from('last'), arrived: 4, declared: undefined },
  {
    framing: 'content-length',
    partial: Buffer.from('Content-Length: 10\r\n\r\nabc'),
    arrived: 3,
    declared: 10,
  },
  {
    framing: 'content-length',
    partial: Buffer.from('Content-Len'),
    arrived: 0,
    declared: undefined,
  },
  { framing: u8, partial: Buffer.from([10, 97, 98, 99]), arrived: 4, declared: undefined },
];

const named = (framing: Framing | Framer) =>
  typeof framing === 'string' ? framing : `a custom Framer (${framing.name})`;
const label = (c: Case) => `${named(c.framing)}, cut short after ${c.partial.length} B`;

/**
 * A Python sink behind the proxy and a Python sender in front of it: the
 * sender writes `bytes` and ends its write side; resolves with every byte
 * the sink read before its end of stream.
 */
async function through(
  bytes: Buffer,
  options: Omit<FrameProxyOptions, 'listen' | 'upstream'>,
): Promise<{ received: Buffer; proxy: Awaited<ReturnType<typeof createFrameProxy<string>>> }> {
  const dir = testDir();
  const sinkPath = join(dir, 'sink.sock');
  const sink = spawnTracked(python3(), [PEER, 'sink', sinkPath]);
  const sinkOut = new Lines(sink);
  expect(await sinkOut.next()).toBe('listening');
  const proxy = await createFrameProxy({
    listen: join(dir, 'proxy.sock'),
    upstream: sinkPath,
    ...options,
  });
  onTestFinished(() => proxy.close());
  const sender = spawnTracked(python3(), [PEER, 'send', proxy.address, bytes.toString('hex')]);
  const senderOut = new Lines(sender);
  const received = Buffer.from(await sinkOut.next(), 'hex');
  expect(await senderOut.next()).toBe('done');
  return { received, proxy };
}

const enc = (body: string, framing: Framing | Framer) => encodeFrame(body, framing);

describe('PX-02 a reordered frame at end of stream never makes a frame nobody sent', () => {
  it('PX-02 u32be: frame 1 reordered, then a header declaring 10 bytes and only "abc": the held frame goes first', async () => {
    const partial = Buffer.concat([u32(10), Buffer.from('abc')]);
    const { received } = await through(Buffer.concat([enc('one', 'u32be'), partial]), {
      faults: [{ action: 'reorder', direction: 'c2s', frame: 1 }],
    });
    expect(received).toEqual(Buffer.concat([enc('one', 'u32be'), partial]));
  });

  it('PX-02 lines: "a\\nb\\nlast" with frame 2 reordered arrives as "a\\nb\\nlast", not "a\\nlastb\\n"', async () => {
    const { received } = await through(Buffer.from('a\nb\nlast'), {
      framing: 'lines',
      faults: [{ action: 'reorder', direction: 'c2s', frame: 2 }],
    });
    expect(received.toString()).toBe('a\nb\nlast');
  });

  for (const c of CASES) {
    it(`PX-02 PX-11 ${label(c)}: the last whole frame reordered goes out before the cut-short tail; an earlier one is swapped`, async () => {
      const a = enc('a', c.framing);
      const b = enc('bb', c.framing);
      const last = await through(Buffer.concat([a, b, c.partial]), {
        framing: c.framing,
        faults: [{ action: 'reorder', direction: 'c2s', frame: 2 }],
      });
      expect(last.received).toEqual(Buffer.concat([a, b, c.partial]));
      expect(last.proxy.stats().faults).toEqual({ reorder: 1 });
      const first = await through(Buffer.concat([a, b, c.partial]), {
        framing: c.framing,
        faults: [{ action: 'reorder', direction: 'c2s', frame: 1 }],
      });
      expect(first.received).toEqual(Buffer.concat([b, a, c.partial]));
    });
  }
});

describe('PX-05 PX-13 a rule that targets a frame cut short by end of stream', () => {
  for (const c of CASES) {
    it(`PX-05 PX-13 PX-11 ${label(c)}: drop keeps it back and counts a drop; the timeline says it was cut short`, async () => {
      const a = enc('a', c.framing);
      const rule: FaultRule = { action: 'drop', direction: 'c2s', frame: 2 };
      const { received, proxy } = await through(Buffer.concat([a, c.partial]), {
        framing: c.framing,
        faults: [rule],
        record: true,
      });
      expect(received).toEqual(a);
      const stats = proxy.stats();
      expect(stats.faults).toEqual({ drop: 1 });
      expect(stats.c2s).toEqual({ frames: 1, bytes: a.length });
      expect(stats.cutShort).toEqual({ c2s: 1, s2c: 0 });
      expect(stats.connections[0]?.cutShort).toEqual({ c2s: 1, s2c: 0 });
      const record = proxy.records().find((r) => r.direction === 'c2s' && r.frame === 2);
      expect(record).toMatchObject({ cutShort: true, fault: 'drop' });
      expect(record?.body.length).toBe(c.arrived);
      expect(record?.length).toBe(c.declared ?? c.arrived);
      expect(record?.line).toMatch(/CUT SHORT by end of stream/);
      expect(record?.line).toMatch(/DROPPED/);
    });

    it(`PX-05 PX-13 PX-11 ${label(c)}: duplicate cannot apply: the bytes go on once, no fault is counted, the timeline says so`, async () => {
      const a = enc('a', c.framing);
      const { received, proxy } = await through(Buffer.concat([a, c.partial]), {
        framing: c.framing,
        faults: [{ action: 'duplicate', direction: 'c2s', frame: 2 }],
        record: true,
      });
      expect(received).toEqual(Buffer.concat([a, c.partial]));
      const stats = proxy.stats();
      expect(stats.faults).toEqual({});
      expect(stats.c2s).toEqual({ frames: 1, bytes: a.length + c.partial.length });
      expect(stats.cutShort).toEqual({ c2s: 1, s2c: 0 });
      const record = proxy.records().find((r) => r.direction === 'c2s' && r.frame === 2);
      expect(record).toMatchObject({ cutShort: true, fault: undefined });
      expect(record?.line).toMatch(/CUT SHORT by end of stream.*duplicate not applied/);
    });

    it(`PX-05 PX-11 ${label(c)}: untargeted, it streams through as it came and is counted as cut short`, async () => {
      const a = enc('a', c.framing);
      const { received, proxy } = await through(Buffer.concat([a, c.partial]), {
        framing: c.framing,
      });
      expect(received).toEqual(Buffer.concat([a, c.partial]));
      expect(proxy.stats().c2s).toEqual({ frames: 1, bytes: a.length + c.partial.length });
      expect(proxy.stats().cutShort).toEqual({ c2s: 1, s2c: 0 });
    });
  }

  it('PX-05 a stream that ends between frames has nothing cut short', async () => {
    const { proxy } = await through(Buffer.concat([enc('a', 'lines'), enc('b', 'lines')]), {
      framing: 'lines',
      faults: [{ action: 'drop', direction: 'c2s', frame: 3 }],
    });
    expect(proxy.stats()).toMatchObject({ faults: {}, cutShort: { c2s: 0, s2c: 0 } });
  });
});

describe('PX-02 content-length: truncate rewrites the Content-Length header only', () => {
  it('PX-02 PX-11 X-Original-Content-Length stays as it came; Content-Length says the new length', async () => {
    const wire = Buffer.from(
      'X-Original-Content-Length: 999\r\nContent-Length: 4\r\nX-Content-Length-Note: 7\r\n\r\nabcd',
    );
    const { received } = await through(wire, {
      framing: 'content-length',
      faults: [{ action: 'truncate', direction: 'c2s', frame: 1 }],
    });
    expect(received.toString()).toBe(
      'X-Original-Content-Length: 999\r\nContent-Length: 2\r\nX-Content-Length-Note: 7\r\n\r\nab',
    );
  });

  it('PX-02 PX-11 the header name in any case, with spaces before the colon, at the top of the block', async () => {
    const { received } = await through(Buffer.from('content-LENGTH  :  6\r\n\r\nabcdef'), {
      framing: 'content-length',
      faults: [{ action: 'truncate', direction: 'c2s', frame: 1, keepBytes: 1 }],
    });
    expect(received.toString()).toBe('content-LENGTH  :  1\r\n\r\na');
  });
});

describe('PX-11 content-length: errors say what is wrong with the header block', () => {
  for (const value of ['-1', '0x2', '1e1', '+3', '12345678901234567']) {
    it(`PX-11 "Content-Length: ${value}" is a value that is not a decimal length, not a missing header`, async () => {
      const { proxy } = await through(Buffer.from(`Content-Length: ${value}\r\n\r\nabc`), {
        framing: 'content-length',
      });
      const [error] = proxy.errors();
      expect(error?.name).toBe('FrameMalformedError');
      expect(error?.message).toContain(`Content-Length value ${JSON.stringify(value)}`);
      expect(error?.message).toContain('not a decimal length');
      expect(error?.message).not.toContain('without a Content-Length header');
    });
  }

  it('PX-11 a header block ending in bare LFs: the 16 KiB limit error names the bare LF blank line', async () => {
    const wire = Buffer.concat([
      Buffer.from('Content-Length: 3\n\nabc'),
      Buffer.alloc(17_000, 120),
    ]);
    const { proxy } = await through(wire, { framing: 'content-length' });
    const [error] = proxy.errors();
    expect(error?.name).toBe('FrameMalformedError');
    expect(error?.message).toContain('no blank line (CR LF CR LF) within the first 16384 bytes');
    expect(error?.message).toContain('a blank line of bare LFs (LF LF) at byte 17');
  });
});

describe('PX-12 no wait outlives its proxy', () => {
  async function idleProxy() {
    const dir = testDir();
    const sinkPath = join(dir, 'sink.sock');
    const sink = spawnTracked(python3(), [PEER, 'sink', sinkPath]);
    expect(await new Lines(sink).next()).toBe('listening');
    const proxy = await createFrameProxy({ listen: join(dir, 'p.sock'), upstream: sinkPath });
    onTestFinished(() => proxy.close());
    return proxy;
  }

  it('PX-12 PX-15 a pending waitForFrames() and hold.waitHeld() reject with a DisposedError as close() returns', async () => {
    const proxy = await idleProxy();
    const outcomes: unknown[] = [];
    const frames = proxy.waitForFrames('c2s', 3, { timeoutMs: 30_000 }).catch((e) => e);
    const held = proxy
      .hold({ direction: 's2c' })
      .waitHeld(1, { timeoutMs: 30_000 })
      .catch((e) => e);
    void frames.then((e) => outcomes.push(e));
    void held.then((e) => outcomes.push(e));
    await proxy.close();
    await Promise.resolve();
    expect(outcomes).toHaveLength(2);
    const [framesError, heldError] = [await frames, await held];
    expect(framesError).toBeInstanceOf(DisposedError);
    expect(framesError.message).toMatch(
      /^Proxy on .*p\.sock was closed while proxy\.waitForFrames\(\) waited for 3 frames c2s; forwarded so far: c2s 0, s2c 0 over 0 connections\.$/,
    );
    expect(heldError).toBeInstanceOf(DisposedError);
    expect(heldError.message).toContain('was closed while hold.waitHeld() waited for 1 frame');
  });

  it('PX-12 after close(), a wait that counters already meet resolves; any other rejects at once', async () => {
    const proxy = await idleProxy();
    await proxy.close();
    await expect(proxy.waitForFrames('c2s', 0)).resolves.toBeUndefined();
    await expect(proxy.waitForFrames('s2c', 1, { timeoutMs: 30_000 })).rejects.toBeInstanceOf(
      DisposedError,
    );
  });
});

describe('PX-14 PX-12 a stdio proxy whose child is gone', () => {
  it('PX-14 PX-12 SIGKILL: a pending waitForFrames() rejects with a StreamEndedError that says how the child ended', async () => {
    const server = await proxyStdio(python3(), [PEER, 'silent']);
    onTestFinished(() => server.close({ graceMs: 500 }).then(() => {}));
    const wait = server.proxy.waitForFrames('s2c', 1, { timeoutMs: 30_000 }).catch((e) => e);
    server.kill('SIGKILL');
    const error = await wait;
    expect(error).toBeInstanceOf(StreamEndedError);
    expect(error.message).toContain(`the child (pid ${server.pid}) was killed by SIGKILL`);
    expect(error.message).toContain('waited for 1 frame s2c');
    expect([error.received, error.expected]).toEqual([0, 1]);
    // Later waits that cannot be met reject at once too, either way.
    await expect(
      server.proxy.waitForFrames('c2s', 1, { timeoutMs: 30_000 }),
    ).rejects.toBeInstanceOf(StreamEndedError);
    await expect(server.proxy.waitForFrames('c2s', 0)).resolves.toBeUndefined();
  });

  it('PX-14 PX-12 the child closes its stdout and goes on reading: s2c waits reject, c2s still flows', async () => {
    const server = await proxyStdio(python3(), [PEER, 'close-stdout'], { framing: 'lines' });
    onTestFinished(() => server.close({ graceMs: 500 }).then(() => {}));
    const error = await server.proxy.waitForFrames('s2c', 1, { timeoutMs: 30_000 }).catch((e) => e);
    expect(error).toBeInstanceOf(StreamEndedError);
    expect(error.message).toContain(`the child (pid ${server.pid}) closed its stdout`);
    server.stdin.write('hello\n');
    await server.proxy.waitForFrames('c2s', 1);
    expect(server.exit).toBeUndefined();
  });

  it('PX-14 PX-15 a hold on a direction the child can no longer send rejects its waitHeld() at once', async () => {
    const server = await proxyStdio(python3(), [PEER, 'silent']);
    onTestFinished(() => server.close({ graceMs: 500 }).then(() => {}));
    const wait = server.proxy
      .hold({ direction: 's2c' })
      .waitHeld(1, { timeoutMs: 30_000 })
      .catch((e) => e);
    server.stdin.end(); // the child reads to EOF and exits 0
    const error = await wait;
    expect(error).toBeInstanceOf(StreamEndedError);
    expect(error.message).toContain(`the child (pid ${server.pid}) exited with code 0`);
  });
});

// PX-01 PX-05: the proxy reads sockets into buffers of its own and reads into
// the same buffer again only once nothing holds a view of it. These tests make
// every reason to hold one happen (a slow reader, so writes stay queued; a
// delayed and a duplicated frame; frames cut out for `record`) and check that
// every byte arrives as sent.
import { createHash, randomBytes } from 'node:crypto';
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createFrameProxy, type FrameProxyOptions } from '../../src/index.js';
import { testDir } from '../helpers/index.js';

/** Frames of 0..3000 random bytes, u32be-prefixed, about `total` bytes in all. */
function randomFrames(total: number): Buffer[] {
  const frames: Buffer[] = [];
  let bytes = 0;
  while (bytes < total) {
    const body = randomBytes(Math.floor(Math.random() * 3001));
    const frame = Buffer.alloc(4 + body.length);
    frame.writeUInt32BE(body.length, 0);
    body.copy(frame, 4);
    frames.push(frame);
    bytes += frame.length;
  }
  return frames;
}

/** A server that reads everything; `slow`: in bursts, pausing every third chunk for a timer's turn, so the proxy's writes queue. */
async function reader(
  dir: string,
  slow: boolean,
): Promise<{ path: string; received: Promise<Buffer> }> {
  const path = join(dir, 'server.sock');
  let deliver: (data: Buffer) => void = () => {};
  const received = new Promise<Buffer>((resolve) => {
    deliver = resolve;
  });
  const sockets = new Set<Socket>();
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    sockets.add(socket);
    const chunks: Buffer[] = [];
    let n = 0;
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (slow && ++n % 3 === 0) {
        socket.pause();
        setTimeout(() => socket.resume(), 1); // the reader is slow: not a wait of the test
      }
    });
    socket.on('end', () => {
      deliver(Buffer.concat(chunks));
      socket.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  onTestFinished(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return { path, received };
}

async function send(
  options: Omit<FrameProxyOptions, 'listen' | 'upstream'>,
  frames: Buffer[],
  slow = true,
): Promise<{ received: Buffer; proxy: Awaited<ReturnType<typeof createFrameProxy>> }> {
  const dir = testDir();
  const server = await reader(dir, slow);
  const proxy = await createFrameProxy({
    listen: join(dir, 'proxy.sock'),
    upstream: server.path,
    ...options,
  });
  onTestFinished(() => proxy.close());
  const client = connect({ path: proxy.address, allowHalfOpen: true });
  onTestFinished(() => {
    client.destroy();
  });
  client.on('data', () => {});
  await new Promise<void>((resolve, reject) => {
    client.once('connect', resolve);
    client.once('error', reject);
  });
  // Writes of 1..64 KiB, not frame-aligned: headers straddle reads.
  const stream = Buffer.concat(frames);
  for (let at = 0; at < stream.length; ) {
    const n = 1 + Math.floor(Math.random() * 64 * 1024);
    if (!client.write(stream.subarray(at, at + n))) {
      await new Promise<void>((resolve) => client.once('drain', resolve));
    }
    at += n;
  }
  client.end();
  return { received: await server.received, proxy };
}

const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex');

describe('the proxy reads into its own buffers', () => {
  it('PX-01 PX-05 16 MiB of random frames in uneven writes, to a reader that keeps pausing: every byte arrives, in order', async () => {
    const frames = randomFrames(16 * 1024 * 1024);
    const { received, proxy } = await send({}, frames);
    const sent = Buffer.concat(frames);
    expect(received.length).toBe(sent.length);
    expect(sha(received)).toBe(sha(sent));
    expect(proxy.stats().c2s).toEqual({ frames: frames.length, bytes: sent.length });
  });

  it('PX-01 PX-05 PX-07 with record on, every 7th frame delayed and every 11th duplicated: the bytes and the records are the frames as sent', async () => {
    const frames = randomFrames(4 * 1024 * 1024);
    const { received, proxy } = await send(
      {
        record: { maxFrames: 100_000, maxBodyBytes: 4096 },
        faults: [
          { action: 'delay', delayMs: 1, direction: 'c2s', frame: { every: 7 } },
          { action: 'duplicate', direction: 'c2s', frame: { every: 11 } },
        ],
      },
      frames,
    );
    const expected = Buffer.concat(
      frames.flatMap((frame, i) =>
        (i + 1) % 11 === 0 && (i + 1) % 7 !== 0 ? [frame, frame] : [frame],
      ),
    );
    expect(received.length).toBe(expected.length);
    expect(sha(received)).toBe(sha(expected));
    const records = proxy.records().filter((r) => r.direction === 'c2s');
    expect(records).toHaveLength(frames.length);
    records.forEach((record, i) => {
      expect(record.body.equals((frames[i] as Buffer).subarray(4)), `frame ${i + 1}`).toBe(true);
    });
  });

  it('PX-01 PX-05 PX-07 to a reader that keeps up, every other frame duplicated and every frame recorded: frames cut out across reads keep their bytes', async () => {
    const frames = randomFrames(8 * 1024 * 1024);
    const { received, proxy } = await send(
      {
        record: { maxFrames: 100_000, maxBodyBytes: 4096 },
        faults: [{ action: 'duplicate', direction: 'c2s', frame: { every: 2 } }],
      },
      frames,
      false,
    );
    const expected = Buffer.concat(
      frames.flatMap((frame, i) => ((i + 1) % 2 === 0 ? [frame, frame] : [frame])),
    );
    expect(sha(received)).toBe(sha(expected));
    const records = proxy.records().filter((r) => r.direction === 'c2s');
    expect(records).toHaveLength(frames.length);
    const wrong = records.filter((r, i) => !r.body.equals((frames[i] as Buffer).subarray(4)));
    expect(wrong.map((r) => r.frame)).toEqual([]);
  });

  it('PX-01 lines in uneven writes, to a reader that keeps pausing: every byte arrives, in order', async () => {
    const lines = Array.from({ length: 20_000 }, () =>
      Buffer.from(`${randomBytes(1 + Math.floor(Math.random() * 300)).toString('base64')}\n`),
    );
    const { received, proxy } = await send({ framing: 'lines' }, lines);
    const sent = Buffer.concat(lines);
    expect(sha(received)).toBe(sha(sent));
    expect(proxy.stats().c2s.frames).toBe(lines.length);
  });
});

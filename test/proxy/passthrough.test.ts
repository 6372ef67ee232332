import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createFrameProxy } from '../../src/index.js';
import { completion, spawnTracked, testDir } from '../helpers/index.js';
import { seededRandom } from '../helpers/parallel.js';
import { rig } from '../helpers/proxy.js';

const PEER = fileURLToPath(new URL('../fixtures/frame-peer.mjs', import.meta.url));

/** Frame i of a seeded stream: sizes from 0 B to 1 MiB (log-uniform, some empty), content unique per frame. */
function streamFrame(random: () => number, i: number): Buffer {
  const r = random();
  const size = r < 0.01 ? 0 : Math.min(1024 * 1024, Math.floor(2 ** (random() * 20)));
  const body = size === 0 ? Buffer.alloc(0) : Buffer.alloc(size, `<${i}:${size}>`);
  const header = Buffer.allocUnsafe(4);
  header.writeUInt32BE(size, 0);
  return Buffer.concat([header, body]);
}

/** Write `count` frames with backpressure; resolve with the bytes written. */
async function sendStream(
  socket: import('node:net').Socket,
  seed: number,
  count: number,
): Promise<number> {
  const random = seededRandom(seed);
  let bytes = 0;
  for (let i = 1; i <= count; i++) {
    const data = streamFrame(random, i);
    bytes += data.length;
    if (!socket.write(data)) await new Promise((r) => socket.once('drain', r));
  }
  return bytes;
}

/** Check frames as they arrive against the same seeded stream; resolve when `count` matched. */
function expectStream(
  socket: import('node:net').Socket,
  seed: number,
  count: number,
): Promise<{ frames: number; bytes: number }> {
  const random = seededRandom(seed);
  let next = 1;
  let expected = streamFrame(random, next);
  let offset = 0;
  let bytes = 0;
  return new Promise((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      let at = 0;
      while (at < chunk.length) {
        if (next > count) return reject(new Error(`extra bytes after frame ${count}`));
        const take = Math.min(expected.length - offset, chunk.length - at);
        if (!chunk.subarray(at, at + take).equals(expected.subarray(offset, offset + take))) {
          return reject(new Error(`frame ${next} differs at byte ${offset}`));
        }
        at += take;
        offset += take;
        bytes += take;
        if (offset === expected.length) {
          next += 1;
          offset = 0;
          if (next > count) return resolve({ frames: count, bytes });
          expected = streamFrame(random, next);
        }
      }
    });
  });
}

describe('pass-through', () => {
  it('PX-01 PX-05 10,000 frames of 0 B to 1 MiB each way arrive byte-identical and in order; counters match', async () => {
    const { server, proxy, client } = await rig();
    const { socket } = await client();
    const up = (await server.nextConnection()).socket;
    // The collectors on these sockets would buffer everything: take the sockets over.
    socket.removeAllListeners('data');
    up.removeAllListeners('data');
    const count = 10_000;
    const [c2sReceived, s2cReceived, c2sSent, s2cSent] = await Promise.all([
      expectStream(up, 1, count),
      expectStream(socket, 2, count),
      sendStream(socket, 1, count),
      sendStream(up, 2, count),
    ]);
    expect(c2sReceived).toEqual({ frames: count, bytes: c2sSent });
    expect(s2cReceived).toEqual({ frames: count, bytes: s2cSent });
    const stats = proxy.stats();
    expect(stats.c2s).toEqual({ frames: count, bytes: c2sSent });
    expect(stats.s2c).toEqual({ frames: count, bytes: s2cSent });
    expect(stats.connections[0]).toMatchObject({ id: 1, c2s: stats.c2s, s2c: stats.s2c });
    expect(stats.faults).toEqual({});
  });

  it('PX-01 one byte at a time: headers split across chunks are tracked and forwarded exactly', async () => {
    const { server, proxy, client } = await rig();
    const { socket } = await client();
    const up = await server.nextConnection();
    const data = Buffer.concat(
      [0, 1, 5, 300].map((n, i) => {
        const h = Buffer.alloc(4);
        h.writeUInt32BE(n, 0);
        return Buffer.concat([h, Buffer.alloc(n, i + 65)]);
      }),
    );
    for (const byte of data) {
      socket.write(Buffer.from([byte]));
      await new Promise((r) => setImmediate(r)); // let each byte travel as its own chunk
    }
    await up.frameCount(4);
    expect(up.frames.map((f) => f.length)).toEqual([0, 1, 5, 300]);
    expect(proxy.stats().c2s).toEqual({ frames: 4, bytes: data.length });
  });

  it('PX-01 client and server in separate processes talk through the proxy', async () => {
    const dir = testDir();
    const serverPath = join(dir, 's.sock');
    const server = spawnTracked(process.execPath, [PEER, 'server', serverPath]);
    await new Promise((ready) => server.stdout?.once('data', ready));
    const proxy = await createFrameProxy({ listen: join(dir, 'p.sock'), upstream: serverPath });
    onTestFinished(() => proxy.close());
    const client = spawnTracked(process.execPath, [PEER, 'client', proxy.address, '2000']);
    const result = await completion(client);
    expect(result.stderr.toString()).toBe('');
    expect(JSON.parse(result.stdout.toString())).toEqual({
      sent: 2000,
      received: 2000,
      mismatched: 0,
    });
    expect(result.code).toBe(0);
    expect([proxy.forwarded('c2s'), proxy.forwarded('s2c')]).toEqual([2000, 2000]);
    server.stdin?.end();
    await completion(server);
  });
});

import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createFrameProxy } from '../../src/index.js';
import { completion, spawnTracked, testDir } from '../helpers/index.js';
import { rig } from '../helpers/proxy.js';
import { expectFramesPassThrough } from '../helpers/sized.js';

const PEER = fileURLToPath(new URL('../fixtures/frame-peer.mjs', import.meta.url));

describe('pass-through', () => {
  // 10,000 of them are in passthrough.stress.test.ts.
  it('PX-01 PX-05 1,500 frames of 0 B to 1 MiB each way arrive byte-identical and in order; counters match', () =>
    expectFramesPassThrough(1500));

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

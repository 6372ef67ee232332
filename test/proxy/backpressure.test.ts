import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { spawnTracked, testDir } from '../helpers/index.js';
import { Lines } from '../helpers/lines.js';
import { memoryOf, stalled } from '../helpers/memory.js';

const PROXY = fileURLToPath(new URL('../fixtures/proxy-process.mjs', import.meta.url));
const MiB = 1024 * 1024;

describe('backpressure', () => {
  it('PX-06 a stalled reader: the proxy holds about a frame plus socket buffers while the client streams 1 GiB', async () => {
    const dir = testDir();
    const upstreamPath = join(dir, 'server.sock');
    let serverSide: Socket | undefined;
    const accepted = new Promise<Socket>((resolve) => {
      const server = createServer({ allowHalfOpen: true }, (socket) => {
        socket.pause(); // the reader stalls: nothing is read until the test says so
        serverSide = socket;
        resolve(socket);
      });
      server.listen(upstreamPath);
      onTestFinished(() => {
        serverSide?.destroy();
        server.close();
      });
    });
    const proxyProcess = spawnTracked(process.execPath, [
      PROXY,
      JSON.stringify({ listen: join(dir, 'proxy.sock'), upstream: upstreamPath }),
    ]);
    const out = new Lines(proxyProcess);
    const { address, pid } = JSON.parse(await out.next());
    const idle = memoryOf(pid).rss;

    const client = connect({ path: address });
    onTestFinished(() => {
      client.destroy();
    });
    await new Promise((r) => client.once('connect', r));
    const server = await accepted;

    const body = 64 * 1024;
    const frame = Buffer.alloc(4 + body, 7);
    frame.writeUInt32BE(body, 0);
    const count = (1024 * MiB) / body; // 1 GiB of bodies
    let blockedWrites = 0;
    const streaming = (async () => {
      for (let i = 0; i < count; i++) {
        if (!client.write(frame)) {
          blockedWrites += 1;
          await new Promise((r) => client.once('drain', r));
        }
      }
      client.end();
    })();

    const stuckAt = await stalled(() => client.bytesWritten);
    const during = memoryOf(pid);
    // The client could not push the gigabyte: it is waiting for 'drain'.
    expect(stuckAt).toBeLessThan(64 * MiB);
    expect(blockedWrites).toBeGreaterThan(0);
    expect(during.peak - idle).toBeLessThan(64 * MiB);

    // The reader wakes up: every byte arrives, and memory stayed bounded throughout.
    let received = 0;
    server.on('data', (chunk: Buffer) => {
      received += chunk.length;
    });
    server.resume();
    await new Promise((r) => server.once('end', r));
    await streaming;
    expect(received).toBe(count * frame.length);
    const after = memoryOf(pid);
    expect(after.peak - idle).toBeLessThan(64 * MiB);
    proxyProcess.stdin?.end();
    const stats = JSON.parse(await out.next());
    expect(stats.c2s).toEqual({ frames: count, bytes: count * frame.length });
  });
});

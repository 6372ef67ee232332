// The README's frame-proxy examples, run as tests (copied into README.md under the same headings).
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createFrameProxy, encodeFrame, manualClock } from '../../src/index.js';
import { FrameCollector } from '../helpers/frames.js';
import { testDir } from '../helpers/index.js';

/** An echo server on a Unix socket in `dir`, closed when the test ends. */
async function echoServer(dir: string) {
  const path = join(dir, 'server.sock');
  const server = createServer((socket) => socket.pipe(socket));
  await new Promise<void>((r) => server.listen(path, r));
  onTestFinished(() => {
    server.close();
  });
  return path;
}

describe('README frame-proxy examples', () => {
  it('PX-02 README: drop one frame between a client and a server', async () => {
    const dir = testDir();
    const upstream = await echoServer(dir);
    // README: drop one frame between a client and a server
    await using proxy = await createFrameProxy({
      listen: join(dir, 'proxy.sock'),
      upstream, // the real server's socket
      faults: [{ action: 'drop', direction: 'c2s', frame: 2 }],
    });

    const client = connect(proxy.address as string);
    const replies = new FrameCollector(client); // (test helper: collects u32be frames)
    client.write(
      Buffer.concat([
        encodeFrame(Buffer.from('ping 1')),
        encodeFrame(Buffer.from('ping 2')),
        encodeFrame(Buffer.from('ping 3')),
      ]),
    );

    await proxy.waitForFrames('s2c', 2);
    await replies.frameCount(2);
    expect(replies.texts()).toEqual(['ping 1', 'ping 3']); // ping 2 never reached the server
    expect(proxy.stats().faults).toEqual({ drop: 1 });
    client.destroy();
  });

  it('PX-12 README: delay a reply, driven by a fake clock', async () => {
    const dir = testDir();
    const upstream = await echoServer(dir);
    const clock = manualClock(); // { now, setTimeout, clearTimeout } — or vitest's fake timers
    // README: delay a reply, driven by a fake clock
    await using proxy = await createFrameProxy({
      listen: join(dir, 'proxy.sock'),
      upstream,
      clock,
      faults: { direction: 's2c', delay: '30s' }, // the seed plan form: every reply waits 30 s
    });
    const client = connect(proxy.address as string);
    const replies = new FrameCollector(client);
    client.write(encodeFrame(Buffer.from('hello')));

    await expect.poll(() => clock.pending()).toBe(1); // the reply is held
    expect(replies.frames).toEqual([]);
    clock.advance(30_000); // thirty seconds pass at once
    await replies.frameCount(1);
    expect(replies.texts()).toEqual(['hello']);
    client.destroy();
  });

  it('PX-09 README: sever every connection mid-test', async () => {
    const dir = testDir();
    const upstream = await echoServer(dir);
    // README: sever every connection mid-test
    await using proxy = await createFrameProxy({ listen: join(dir, 'proxy.sock'), upstream });
    const client = connect(proxy.address as string);
    const replies = new FrameCollector(client);
    client.write(encodeFrame(Buffer.from('before')));
    await replies.frameCount(1);

    proxy.sever(); // both sides see the connection close; new connections work normally
    await replies.until((c) => c.closed, 'the client to see the close');
    expect(proxy.stats().c2s).toEqual({ frames: 1, bytes: 10 }); // counters stay readable
  });
});

// The README's frame-proxy examples, run as tests (copied into README.md under the same headings).
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  createFrameProxy,
  createFrameReader,
  encodeFrame,
  manualClock,
  proxyStdio,
  StreamEndedError,
} from '../../src/index.js';
import { testDir } from '../helpers/index.js';
import { echoServer } from '../helpers/proxy.js';

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

    const client = connect(proxy.address);
    const replies = createFrameReader(client); // collects the u32be frames that come back
    client.write(
      Buffer.concat([encodeFrame('ping 1'), encodeFrame('ping 2'), encodeFrame('ping 3')]),
    );

    await proxy.waitForFrames('s2c', 2);
    await replies.waitForFrames(2);
    expect(replies.texts()).toEqual(['ping 1', 'ping 3']); // ping 2 never reached the server
    expect(proxy.stats().faults).toEqual({ drop: 1 });
    client.destroy();
  });

  it('PX-12 README: delay a reply, driven by a fake clock', async () => {
    const dir = testDir();
    const upstream = await echoServer(dir);
    // README: delay a reply, driven by a fake clock
    const clock = manualClock(); // time moves only when the test says so
    await using proxy = await createFrameProxy({
      listen: join(dir, 'proxy.sock'),
      upstream,
      clock,
      faults: { direction: 's2c', delay: '30s' }, // the seed plan form: every reply waits 30 s
    });
    const client = connect(proxy.address);
    const replies = createFrameReader(client);
    client.write(encodeFrame('hello'));

    await expect.poll(() => clock.pending()).toBe(1); // the reply is held
    expect(replies.frames()).toEqual([]);
    clock.advance(30_000); // thirty seconds pass at once
    await replies.waitForFrames(1);
    expect(replies.texts()).toEqual(['hello']);
    client.destroy();
  });

  it('PX-09 README: sever every connection mid-test', async () => {
    const dir = testDir();
    const upstream = await echoServer(dir);
    // README: sever every connection mid-test
    await using proxy = await createFrameProxy({ listen: join(dir, 'proxy.sock'), upstream });
    const client = connect(proxy.address);
    const replies = createFrameReader(client);
    client.write(encodeFrame('before'));
    await replies.waitForFrames(1);

    proxy.sever(); // both sides see the connection close; new connections work normally
    await replies.waitForEnd();
    expect(proxy.stats().c2s).toEqual({ frames: 1, bytes: 10 }); // counters stay readable
  });

  it('PX-09 README: a client that expects more than it gets fails fast', async () => {
    const dir = testDir();
    const upstream = await echoServer(dir);
    // README: a client that expects more than it gets fails fast
    await using proxy = await createFrameProxy({
      listen: join(dir, 'proxy.sock'),
      upstream,
      faults: [{ action: 'sever-mid-frame', direction: 's2c', frame: 2 }],
    });
    const client = connect(proxy.address);
    const replies = createFrameReader(client);
    client.write(Buffer.concat([encodeFrame('one'), encodeFrame('two')]));

    await expect(replies.waitForFrames(2)).rejects.toThrow(StreamEndedError); // at once, no timeout
    expect(replies.texts()).toEqual(['one']);
    expect(replies.rest()).toHaveLength(5); // the header and half of "two"
  });

  it('PX-14 README: fault a JSON-RPC server on stdio', async () => {
    const server = fileURLToPath(new URL('../fixtures/jsonrpc_stdio.py', import.meta.url));
    // README: fault a JSON-RPC server on stdio
    await using rpc = await proxyStdio('python3', [server], {
      framing: 'lines', // one JSON message per line
      faults: [{ action: 'drop', direction: 's2c', frame: 1 }], // the first reply is lost
    });
    const replies = createFrameReader(rpc.stdout, { framing: 'lines' });
    const call = (id: number, method: string, params: unknown) =>
      rpc.stdin.write(encodeFrame(JSON.stringify({ jsonrpc: '2.0', id, method, params }), 'lines'));
    call(1, 'add', [1, 2]);
    call(2, 'add', [3, 4]);

    await rpc.proxy.waitForFrames('s2c', 1);
    expect(replies.texts()).toEqual(['{"jsonrpc": "2.0", "id": 2, "result": 7}']);
  });

  it('PX-15 PX-13 README: hold a reply for a race, then read the timeline', async () => {
    const dir = testDir();
    const upstream = await echoServer(dir);
    // README: hold a reply for a race, then read the timeline
    await using proxy = await createFrameProxy({
      listen: join(dir, 'proxy.sock'),
      upstream,
      record: true, // keep every frame for timeline()
      faults: [{ action: 'drop', direction: 'c2s', frame: 2 }],
    });
    const gate = proxy.hold({ direction: 's2c', frame: 1 });
    const client = connect(proxy.address);
    const replies = createFrameReader(client);
    client.write(Buffer.concat([encodeFrame('{"method":"ping"}'), encodeFrame('lost')]));

    await gate.waitHeld(); // the reply is at the proxy, not at the client
    expect(replies.frames()).toEqual([]);
    gate.release();
    await replies.waitForFrames(1);
    const timeline = proxy.timeline(); // print it when a test fails:
    //      0.2 ms  c2s #1  conn 1  17 B  {"method":"ping"}
    //      0.2 ms  c2s #2  conn 1  4 B  lost  DROPPED
    //      0.9 ms  s2c #1  conn 1  17 B  {"method":"ping"}  HELD
    expect(timeline).toMatch(/s2c #1 {2}conn 1 {2}17 B {2}\{"method":"ping"\} {2}HELD$/);
  });
});

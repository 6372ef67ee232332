import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createFrameProxy, type FaultRule } from '../../src/index.js';
import { python3, spawnTracked, testDir } from '../helpers/index.js';
import { Lines } from '../helpers/lines.js';

const PEER = fileURLToPath(new URL('../fixtures/mp_peer.py', import.meta.url));

/** A Python Listener behind the proxy and a Python Client in front of it, each its own process. */
async function pythonPair(faults: FaultRule[] = []) {
  const dir = testDir();
  const serverPath = join(dir, 'py.sock');
  const server = spawnTracked(python3(), [PEER, 'server', serverPath]);
  const serverOut = new Lines(server);
  expect(await serverOut.next()).toBe('listening');
  const proxy = await createFrameProxy({
    listen: join(dir, 'proxy.sock'),
    upstream: serverPath,
    faults,
  });
  onTestFinished(() => proxy.close());
  const client = spawnTracked(python3(), [PEER, 'client', proxy.address]);
  const clientOut = new Lines(client);
  expect(await clientOut.next()).toBe('connected');
  const command = (line: string) => client.stdin?.write(`${line}\n`);
  return { proxy, serverOut, clientOut, command };
}

describe("a real peer: Python's multiprocessing.connection over AF_UNIX", () => {
  it('PX-01 messages of all kinds arrive intact through the proxy, both ways', async () => {
    const { proxy, serverOut, clientOut, command } = await pythonPair();
    const messages = [
      "{'a': 1, 'b': [1, 2, 3]}",
      "'xxx'",
      "b'\\x00\\xff'",
      `'${'y'.repeat(100_000)}'`,
    ];
    for (const message of messages) {
      command(`send ${message}`);
      expect(await clientOut.next()).toBe('sent');
    }
    expect(await serverOut.next()).toBe("got {'a': 1, 'b': [1, 2, 3]}");
    expect(await serverOut.next()).toBe("got 'xxx'");
    expect(await serverOut.next()).toBe("got b'\\x00\\xff'");
    expect(await serverOut.next()).toBe(`got '${'y'.repeat(100_000)}'`);
    command('recv');
    expect(await clientOut.next()).toBe("recv ('ack', {'a': 1, 'b': [1, 2, 3]})");
    await proxy.waitForFrames('s2c', 4);
    expect([proxy.forwarded('c2s'), proxy.forwarded('s2c')]).toEqual([4, 4]);
  });

  it('PX-02 a drop rule: the dropped message never reaches the Python server', async () => {
    const { proxy, serverOut, clientOut, command } = await pythonPair([
      { action: 'drop', direction: 'c2s', frame: 2 },
    ]);
    for (const m of ["'first'", "'second'", "'third'"]) {
      command(`send ${m}`);
      expect(await clientOut.next()).toBe('sent');
    }
    // The server's second recv() returns the third message: the second never arrived.
    expect(await serverOut.next()).toBe("got 'first'");
    expect(await serverOut.next()).toBe("got 'third'");
    expect(proxy.stats().faults).toEqual({ drop: 1 });
    command('recv');
    expect(await clientOut.next()).toBe("recv ('ack', 'first')");
    command('recv');
    expect(await clientOut.next()).toBe("recv ('ack', 'third')");
  });

  it('PX-09 a sever makes the Python client raise EOFError or ConnectionResetError', async () => {
    const { proxy, serverOut, clientOut, command } = await pythonPair();
    command("send 'hello'");
    expect(await clientOut.next()).toBe('sent');
    expect(await serverOut.next()).toBe("got 'hello'");
    command('recv');
    expect(await clientOut.next()).toBe("recv ('ack', 'hello')");
    proxy.sever();
    command('recv');
    expect(await clientOut.next()).toMatch(/^error (EOFError|ConnectionResetError)$/);
    expect(await serverOut.next()).toMatch(/^closed (EOFError|ConnectionResetError)$/);
  });
});

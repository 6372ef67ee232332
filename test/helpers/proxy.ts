import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { createFrameProxy, type FrameProxy, type FrameProxyOptions } from '../../src/index.js';
import { FrameCollector, frameServer, type TestServer } from './frames.js';
import { testDir } from './index.js';

export interface Rig {
  dir: string;
  server: TestServer;
  proxy: FrameProxy<string>;
  /** Open a client connection through the proxy; its collector reads what comes back. */
  client(): Promise<{ socket: Socket; received: FrameCollector }>;
}

/** A server, a proxy in front of it, and clients — all on Unix sockets in this test's own dir. */
export async function rig(
  options: Omit<FrameProxyOptions, 'listen' | 'upstream'> = {},
): Promise<Rig> {
  const dir = testDir();
  const server = await frameServer(dir);
  const proxy = await createFrameProxy({
    listen: join(dir, 'proxy.sock'),
    upstream: server.path,
    ...options,
  });
  onTestFinished(() => proxy.close());
  return {
    dir,
    server,
    proxy,
    client: () => openClient(proxy.address),
  };
}

export async function openClient(
  path: string,
): Promise<{ socket: Socket; received: FrameCollector }> {
  const socket = connect({ path, allowHalfOpen: true });
  const received = new FrameCollector(socket);
  onTestFinished(() => {
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return { socket, received };
}

/** An echo server on a Unix socket in `dir`, closed when the test ends. */
export async function echoServer(dir: string): Promise<string> {
  const path = join(dir, 'server.sock');
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {}); // a proxy may sever it mid-echo
    socket.pipe(socket);
  });
  await new Promise<void>((r) => server.listen(path, r));
  onTestFinished(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((r) => server.close(r));
  });
  return path;
}

/** A connected client socket, destroyed when the test ends. */
export async function client(path: string): Promise<Socket> {
  const socket = connect(path);
  onTestFinished(() => {
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return socket;
}

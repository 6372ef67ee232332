import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { createFrameProxy, type FrameProxy, type FrameProxyOptions } from '../../src/index.js';
import { FrameCollector, frameServer, type TestServer } from './frames.js';
import { testDir } from './index.js';

export interface Rig {
  dir: string;
  server: TestServer;
  proxy: FrameProxy;
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
    client: () => openClient(proxy.address as string),
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

/** A manual clock for `delay` faults: time moves only when the test advances it. */
export function manualClock() {
  let now = 1_000_000;
  let timers: Array<{ at: number; fn: () => void; id: number }> = [];
  let nextId = 1;
  return {
    now: () => now,
    setTimeout(fn: () => void, ms: number) {
      const id = nextId++;
      timers.push({ at: now + ms, fn, id });
      return id;
    },
    clearTimeout(id: unknown) {
      timers = timers.filter((t) => t.id !== id);
    },
    pending: () => timers.length,
    advance(ms: number) {
      now += ms;
      const due = timers.filter((t) => t.at <= now).sort((a, b) => a.at - b.at);
      timers = timers.filter((t) => t.at > now);
      for (const t of due) t.fn();
    },
  };
}

import { readProcFile } from '../internal/proc.js';

/**
 * Bytes a TCP server wrote that its clients have not read yet (LK-02: an
 * SSE stream a client stopped reading), as the kernel holds them, read from
 * Linux's /proc/net/tcp and tcp6 on the test's thread (the worker is not
 * asked): for each connection to `port`, what the server's socket has not
 * had acknowledged (`tx_queue`) and what the client's socket received and
 * its reader did not take (`rx_queue`, when the client is on this machine
 * and in this network namespace). What the worker's Node buffers hold, not
 * handed to the kernel yet, is not counted. Undefined without /proc.
 *
 *   sl local_address rem_address st tx_queue:rx_queue …
 *   0: 0100007F:A2F2 0100007F:C350 01 00000000:00000000 …
 */
export function unreadByClients(
  port: number,
  read: (path: string) => string | null | undefined = readProcFile,
): number | undefined {
  const sockets: Array<{ local: string; remote: string; tx: number; rx: number }> = [];
  let readable = false;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = read(file);
    if (typeof text !== 'string') continue;
    readable = true;
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      const [local, remote, state, queues] = [f[1], f[2], f[3], f[4]];
      if (!local || !remote || !queues || state === '0A') continue; // 0A: listening
      const [tx, rx] = queues.split(':').map((h) => Number.parseInt(h, 16));
      sockets.push({ local, remote, tx: tx || 0, rx: rx || 0 });
    }
  }
  if (!readable) return undefined;
  const portOf = (address: string) =>
    Number.parseInt(address.slice(address.lastIndexOf(':') + 1), 16);
  const served = sockets.filter((s) => portOf(s.local) === port);
  const ends = new Set(served.map((s) => `${s.remote}>${s.local}`));
  let bytes = 0;
  for (const s of served) bytes += s.tx;
  for (const s of sockets) if (ends.has(`${s.local}>${s.remote}`)) bytes += s.rx;
  return bytes;
}

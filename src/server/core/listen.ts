import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { WireListen } from '../protocol.js';

/**
 * The listening socket (design §6): `node:http` with Node's own timeouts
 * (none of which cuts a held response), a backlog of 4096 (the default 511
 * drops SYNs when 1,000 clients connect at once), no Host header required
 * (a mock answers HTTP/1.0 clients too), and `Expect: 100-continue`
 * answered by the request handler (so a body over the limit is refused
 * before it is sent).
 */

export interface ListenHandlers {
  request(req: IncomingMessage, res: ServerResponse): void;
  checkContinue(req: IncomingMessage, res: ServerResponse): void;
  clientError(
    error: NodeJS.ErrnoException & { rawPacket?: Buffer; reason?: string },
    socket: Socket,
  ): void;
}

export type Listening =
  | { ok: true; server: Server; url: string; socketPath: string | undefined }
  | { ok: false; address: string; errno: string | undefined; message: string };

export function listen(address: WireListen, handlers: ListenHandlers): Promise<Listening> {
  const server = createServer({ requireHostHeader: false }, handlers.request);
  server.on('checkContinue', handlers.checkContinue);
  server.on('clientError', handlers.clientError);
  const where = address.kind === 'tcp' ? `${address.host}:${address.port}` : address.path;
  return new Promise<Listening>((resolve) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      resolve({
        ok: false,
        address: where,
        errno: error.code,
        message: listenAdvice(where, address.kind, error),
      });
    });
    const ready = () => {
      server.removeAllListeners('error');
      server.on('error', () => {}); // after listening, errors belong to sockets (clientError)
      if (address.kind === 'unix') {
        resolve({ ok: true, server, url: 'http://localhost', socketPath: address.path });
        return;
      }
      const { port } = server.address() as { port: number };
      resolve({
        ok: true,
        server,
        url: `http://${urlHost(address.host)}:${port}`,
        socketPath: undefined,
      });
    };
    if (address.kind === 'unix') server.listen({ path: address.path, backlog: 4096 }, ready);
    else server.listen({ host: address.host, port: address.port, backlog: 4096 }, ready);
  });
}

/**
 * Keep `gauges[0]` at the number of client connections open, for the test's
 * thread to read at once (the leak report, LK-02): two atomic adds a
 * connection, no message.
 */
export function countConnections(server: Server, gauges: Int32Array): void {
  server.on('connection', (socket: Socket) => {
    Atomics.add(gauges, 0, 1);
    socket.once('close', () => Atomics.sub(gauges, 0, 1));
  });
}

/** The host as a URL names it: a wildcard as loopback, IPv6 in brackets. */
function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

function listenAdvice(where: string, kind: 'tcp' | 'unix', error: NodeJS.ErrnoException): string {
  const base = `createMockServer() cannot listen on ${where}: ${error.message}.`;
  switch (error.code) {
    case 'EADDRINUSE':
      return kind === 'tcp'
        ? `${base} Something else listens there: use port 0 (the default) to pick a free port.`
        : `${base} Something listens on that socket: use a socket path of this test's own (in a dir made with mkdtemp).`;
    case 'EACCES':
    case 'EPERM':
      return kind === 'tcp'
        ? `${base} No permission: ports below 1024 need privileges. Use port 0 (the default) or a port from 1024.`
        : `${base} No permission to make a socket in its dir: use a path in a dir you can write, made with mkdtemp.`;
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return `${base} The host is not an address of this machine: use 127.0.0.1 (the default).`;
    case 'ENOENT':
      return `${base} The socket's dir does not exist: create it first, or use a dir made with mkdtemp.`;
    default:
      return base;
  }
}

import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { testDir } from './index.js';

/** A u32be frame: 4-byte big-endian length, then the body. */
export function frame(body: string | Buffer): Buffer {
  const data = typeof body === 'string' ? Buffer.from(body) : body;
  const header = Buffer.allocUnsafe(4);
  header.writeUInt32BE(data.length, 0);
  return Buffer.concat([header, data]);
}

/** Cut `data` at the given offsets (taken modulo its length + 1, sorted, deduplicated). */
export function cut(data: Buffer, offsets: number[]): Buffer[] {
  const points = [...new Set(offsets.map((o) => o % (data.length + 1)))].sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let from = 0;
  for (const at of [...points, data.length]) {
    pieces.push(data.subarray(from, at));
    from = at;
  }
  return pieces;
}

/** Collects the frames arriving on a socket (u32be), in order. */
export class FrameCollector {
  readonly frames: Buffer[] = [];
  #buffer: Buffer = Buffer.alloc(0);
  #waiters: Array<() => void> = [];
  ended = false;
  closed = false;
  error: Error | undefined;

  constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.#buffer = this.#buffer.length ? Buffer.concat([this.#buffer, chunk]) : chunk;
      while (this.#buffer.length >= 4) {
        const n = this.#buffer.readUInt32BE(0);
        if (this.#buffer.length < 4 + n) break;
        this.frames.push(Buffer.from(this.#buffer.subarray(4, 4 + n)));
        this.#buffer = this.#buffer.subarray(4 + n);
      }
      this.#wake();
    });
    socket.on('end', () => {
      this.ended = true;
      this.#wake();
    });
    socket.on('error', (error) => {
      this.error = error;
      this.#wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.#wake();
    });
  }

  /** Bytes received that do not complete a frame. */
  get partial(): Buffer {
    return this.#buffer;
  }

  texts(): string[] {
    return this.frames.map((f) => f.toString());
  }

  /** Wait (with a deadline) until `predicate` holds; re-checked whenever data, end or close arrive. */
  until(predicate: (c: this) => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    if (predicate(this)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== check);
        reject(
          new Error(
            `timed out after ${timeoutMs} ms waiting for ${what}; frames so far: ${this.frames.length}`,
          ),
        );
      }, timeoutMs);
      const check = () => {
        if (!predicate(this)) return;
        clearTimeout(timer);
        this.#waiters = this.#waiters.filter((w) => w !== check);
        resolve();
      };
      this.#waiters.push(check);
    });
  }

  frameCount(n: number, timeoutMs?: number): Promise<void> {
    return this.until((c) => c.frames.length >= n, `${n} frames`, timeoutMs);
  }

  #wake(): void {
    for (const w of [...this.#waiters]) w();
  }
}

export interface TestServer {
  server: Server;
  path: string;
  /** One collector per accepted connection, in accept order. */
  connections: FrameCollector[];
  nextConnection(): Promise<FrameCollector>;
}

/** A Unix-socket server in this test's temp dir that collects frames; closed when the test ends. */
export async function frameServer(dir = testDir(), name = 'server.sock'): Promise<TestServer> {
  const path = join(dir, name);
  const connections: FrameCollector[] = [];
  const pending: Array<(c: FrameCollector) => void> = [];
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    const collector = new FrameCollector(socket);
    connections.push(collector);
    pending.shift()?.(collector);
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  onTestFinished(async () => {
    for (const c of connections) c.socket.destroy();
    await new Promise((r) => server.close(r));
  });
  let seen = 0;
  return {
    server,
    path,
    connections,
    nextConnection() {
      const index = seen++;
      const ready = connections[index];
      if (ready) return Promise.resolve(ready);
      return new Promise((resolve) => pending.push(resolve));
    },
  };
}

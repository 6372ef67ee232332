import { Socket } from 'node:net';

/** Bytes one read may bring (Node reads 64 KiB at most into a buffer of its own). */
export const READ_BYTES = 64 * 1024;

/** @internal The `onread` option of `net.Socket` / `net.connect()`. */
export interface OnRead {
  buffer: () => Buffer;
  callback: (bytes: number, buffer: Buffer) => boolean;
}

/**
 * @internal A socket's reads into buffers the proxy owns (net's `onread`),
 * instead of a new buffer and a stream `'data'` event per read: what each
 * read brought goes to the sink as a view of that buffer, and the next read
 * goes into the same buffer when nothing kept a hold of the last one (the
 * pump forwarded it whole, and the destination took it in one synchronous
 * write); otherwise into a new one, leaving the old to whoever holds it.
 * Chunks that come before the sink is attached are copied and handed over
 * on attach.
 */
export class OwnReads {
  #buffer = Buffer.allocUnsafe(READ_BYTES);
  #sink: ((chunk: Buffer) => void) | undefined;
  #released: () => boolean = () => false;
  #early: Buffer[] = [];

  readonly onread: OnRead = {
    buffer: () => this.#buffer,
    callback: (bytes, buffer) => {
      const chunk = buffer.subarray(0, bytes);
      const sink = this.#sink;
      if (sink === undefined) this.#early.push(Buffer.from(chunk));
      else sink(chunk);
      if (sink === undefined || !this.#released()) this.#buffer = Buffer.allocUnsafe(READ_BYTES);
      return true;
    },
  };

  /** Send chunks to `sink`; after each, `released()` says whether nothing holds on to it any more. */
  attach(sink: (chunk: Buffer) => void, released: () => boolean): void {
    this.#sink = sink;
    this.#released = released;
    const early = this.#early;
    this.#early = [];
    for (const chunk of early) sink(chunk);
  }
}

/** The native handle of a socket, as far as the proxy uses it. */
interface StreamHandle {
  useUserBuffer?: unknown;
}

/**
 * @internal An accepted socket (paused, nothing read yet) rebuilt around
 * the same handle so that its reads land in `reads`' buffers: a server
 * cannot give `onread` to the sockets it accepts. The old socket object
 * lets go of the handle and is destroyed (which closes nothing, and frees
 * the server's count of it). Undefined when the socket is not one this can
 * be done to (no handle, or data already buffered): use it as it is.
 */
export function adoptAccepted(socket: Socket, reads: OwnReads): Socket | undefined {
  const old = socket as unknown as { _handle: StreamHandle | null };
  const handle = old._handle;
  if (
    handle === null ||
    typeof handle.useUserBuffer !== 'function' ||
    socket.readableLength > 0 ||
    socket.destroyed
  ) {
    return undefined;
  }
  old._handle = null;
  socket.destroy();
  return new Socket({
    handle,
    allowHalfOpen: true,
    pauseOnCreate: true,
    onread: reads.onread,
  } as unknown as ConstructorParameters<typeof Socket>[0]);
}

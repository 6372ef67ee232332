import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * How long a reset waits after the bytes already written left: on Linux a
 * reset that lands while the peer still has unread data is reported to it
 * as a plain end of stream. 1 ms was too little for a peer whose event loop
 * is busy (about 1 run in 6 of the PX-02 reset test, the server in the test
 * process itself, saw a half-open end instead of ECONNRESET).
 */
export const RESET_GRACE_MS = 25;

/**
 * Reset a TCP socket (RST); close any other kind. The reset waits for bytes
 * already written to leave and a moment more (RESET_GRACE_MS). Used by the
 * frame proxy and the mock server.
 */
export function reset(stream: Duplex): void {
  const socket = stream as Socket;
  socket.pause();
  if (typeof socket.resetAndDestroy !== 'function' || !socket.remoteAddress) {
    socket.destroy();
    return;
  }
  socket.write(Buffer.alloc(0), () => setTimeout(() => socket.resetAndDestroy(), RESET_GRACE_MS));
}

import { reset } from '../../internal/socket-reset.js';
import type { ResponseCut } from '../types.js';
import type { Exchange } from './exchange.js';

/**
 * Cutting a response short at its exact point (design §5.6). The end is
 * posted first (`endedBy: 'cut'`, the counters), then, once the response
 * has the connection (a pipelined one waits for the responses before it)
 * and every byte before the cut was written: `fin` ends the connection
 * without the terminating chunk (curl exit 18), `rst` resets it after
 * RESET_GRACE_MS (curl 56), `stall` writes nothing more and keeps the
 * connection until the client leaves, `dispose()`, or `timeoutMs`. A client
 * that leaves before those bytes were written makes it `client-abort`.
 */
export async function cutNow(x: Exchange, how: ResponseCut['how'], error?: string): Promise<void> {
  x.end('cut', error);
  if (how === 'stall') {
    // timeoutMs runs from the cut even when a client that does not read keeps the bytes before it back.
    if (!(await x.onWire())) return;
    void x.flushed().then((ok) => ok && x.delivered());
    if (await x.wait(x.timeoutMs)) x.closeByServer();
    return;
  }
  if (!(await x.flushed())) return;
  x.endsConnection();
  if (how === 'fin') {
    x.socket.end();
    x.finish();
    return;
  }
  reset(x.socket);
  x.finish();
}

/**
 * `resetBeforeHeaders`: a reset before any byte of the answer (ECONNRESET),
 * once the response has the connection (after the responses before it).
 */
export async function resetNow(x: Exchange): Promise<void> {
  x.end('cut');
  if (!(await x.onWire())) return;
  x.endsConnection();
  const socket = x.socket;
  // Behind a pipelined response whose last bytes were just written, an RST
  // sent at once can reach the client as a plain end (decision 002): wait
  // for them to leave, as a cut's reset does.
  if (socket.bytesWritten > 0) reset(socket);
  else if (typeof socket.resetAndDestroy === 'function' && socket.remoteAddress)
    socket.resetAndDestroy();
  else socket.destroy();
  x.finish();
}

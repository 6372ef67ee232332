import type { WireHttpResponse } from '../types.js';
import type { Exchange } from './exchange.js';

/**
 * A `wireBase64` response (design §5.7): its bytes on the bare socket — the
 * status line, headers and framing are whatever they say, malformed ones
 * included — then the end of the connection (no keep-alive after it). On a
 * pipelined connection it waits for the responses before it.
 */
export async function writeWire(x: Exchange, response: WireHttpResponse): Promise<void> {
  const first = Buffer.from(response.pieces[0] ?? new Uint8Array(0))
    .subarray(0, 16)
    .toString('latin1');
  const status = /^HTTP\/\d(?:\.\d)? (\d{3})/.exec(first)?.[1];
  x.patch({ status: status === undefined ? undefined : Number(status), startedAt: Date.now() });
  if (!(await x.onWire())) return;
  x.endsConnection();
  for (let i = 0; i < response.pieces.length; i++) {
    const gap = response.gaps[i] ?? 0;
    if (gap > 0 && !(await x.wait(gap))) return;
    const piece = response.pieces[i] as Uint8Array;
    x.bytesSent += piece.length;
    if (i === response.pieces.length - 1) {
      x.end('complete');
      x.writeRaw(piece, true);
      return;
    }
    x.progress();
    if (!x.writeRaw(piece, false) && !(await waitDrain(x))) return;
  }
  x.end('complete');
  x.writeRaw(new Uint8Array(0), true);
}

function waitDrain(x: Exchange): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (value: boolean) => {
      x.socket.off('drain', onDrain);
      x.socket.off('close', onClose);
      resolve(value);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    x.socket.once('drain', onDrain);
    x.socket.once('close', onClose);
  });
}

// Benchmark client: `node source.mjs <socket> <frameBytes> <totalBytes> [lines]`:
// streams u32be frames of one body size (or, with `lines`, lines of that many
// bytes counting the newline), batched into ~64 KiB writes so the client is
// never the bottleneck, honouring backpressure; then ends.
import { connect } from 'node:net';

const [path, sizeText, totalText, framing = 'u32be'] = process.argv.slice(2);
const size = Number(sizeText);
let frame;
if (framing === 'lines') {
  frame = Buffer.alloc(size, 0x5a);
  frame[size - 1] = 0x0a;
} else {
  frame = Buffer.alloc(4 + size, 0x5a);
  frame.writeUInt32BE(size, 0);
}
const perBatch = Math.max(1, Math.floor((64 * 1024) / frame.length));
const batch = Buffer.concat(Array.from({ length: perBatch }, () => frame));
const batches = Math.max(1, Math.round(Number(totalText) / batch.length));

const socket = connect({ path, allowHalfOpen: true });
socket.on('connect', async () => {
  for (let i = 0; i < batches; i++) {
    if (!socket.write(batch)) await new Promise((r) => socket.once('drain', r));
  }
  socket.end();
});
socket.on('error', () => process.exit(0)); // the bench closed the far side
socket.on('close', () => process.exit(0));
socket.resume();

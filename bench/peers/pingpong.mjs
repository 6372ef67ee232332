// Round trips of one 16-byte frame: `node pingpong.mjs <socket> <count> [<upstream>]`;
// prints the RTTs in ms. With <upstream>, this process also hosts the frame proxy
// (listening on <socket>, forwarding to <upstream>), the way a test usually runs it.
import { connect } from 'node:net';
import { createFrameProxy } from 'shimkit';

const [path, countText, upstream] = process.argv.slice(2);
const count = Number(countText);
const proxy = upstream ? await createFrameProxy({ listen: path, upstream }) : undefined;
const frame = Buffer.alloc(20, 1);
frame.writeUInt32BE(16, 0);
const rtts = [];
const socket = connect({ path });
let started = 0;
let got = 0;
socket.on('connect', () => {
  started = performance.now();
  socket.write(frame);
});
socket.on('data', (chunk) => {
  got += chunk.length;
  while (got >= 20) {
    got -= 20;
    rtts.push(performance.now() - started);
    if (rtts.length === count) {
      console.log(JSON.stringify(rtts));
      socket.end();
      return;
    }
    started = performance.now();
    socket.write(frame);
  }
});
socket.on('close', async () => {
  await proxy?.close();
  process.exit(0);
});

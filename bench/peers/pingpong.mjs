// Round trips of one 16-byte frame: `node pingpong.mjs <socket> <count>`; prints the RTTs in ms.
import { connect } from 'node:net';

const [path, countText] = process.argv.slice(2);
const count = Number(countText);
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
socket.on('close', () => process.exit(0));

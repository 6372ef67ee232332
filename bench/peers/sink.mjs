// Benchmark server: `node sink.mjs <socket> <mode>`.
//   count: read everything, print {"bytes","ms"} (first byte to end of stream) per connection
//   echo:  send every chunk straight back (for ping-pong round trips)
//   stall: accept and never read
import { createServer } from 'node:net';

const [path, mode = 'count'] = process.argv.slice(2);
const server = createServer({ allowHalfOpen: true }, (socket) => {
  socket.on('error', () => {});
  if (mode === 'stall') return socket.pause();
  if (mode === 'echo') {
    socket.on('data', (chunk) => socket.write(chunk));
    socket.on('end', () => socket.end());
    return;
  }
  let bytes = 0;
  let first = 0;
  socket.on('data', (chunk) => {
    if (bytes === 0) first = performance.now();
    bytes += chunk.length;
  });
  socket.on('end', () => {
    console.log(JSON.stringify({ bytes, ms: performance.now() - first }));
    socket.end();
  });
});
server.listen(path, () => console.log('ready'));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();

// Benchmark baseline: the plainest relay, `a.pipe(b); b.pipe(a)`, no framing.
//   node relay.mjs <listen socket> <upstream socket>
import { connect, createServer } from 'node:net';

const [listen, upstream] = process.argv.slice(2);
createServer({ allowHalfOpen: true }, (a) => {
  const b = connect({ path: upstream, allowHalfOpen: true });
  a.pipe(b);
  b.pipe(a);
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
}).listen(listen, () => console.log('ready'));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();

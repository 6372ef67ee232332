// The frame proxy under benchmark, in its own process:
// `node proxy.mjs <listen> <upstream> [<framing>]` (u32be by default).
import { createFrameProxy } from 'shimkit';

const [listen, upstream, framing = 'u32be'] = process.argv.slice(2);
await createFrameProxy({ listen, upstream, framing });
console.log('ready');
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();

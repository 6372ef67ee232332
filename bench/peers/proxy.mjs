// The frame proxy under benchmark, in its own process: `node proxy.mjs <listen> <upstream>`.
import { createFrameProxy } from 'shimkit';

const [listen, upstream] = process.argv.slice(2);
await createFrameProxy({ listen, upstream });
console.log('ready');
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();

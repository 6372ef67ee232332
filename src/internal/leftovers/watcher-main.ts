import { tmpdir } from 'node:os';
import { type Owner, ownerGone } from './owner.js';
import { sweepDirs } from './sweep.js';

/**
 * `node watcher.cjs <pid> <start> <scope>` (see watcher.ts): wait for that
 * owner to be gone, then sweep what it left, and exit.
 */
const [pid, start, scope] = process.argv.slice(2);
const owner: Owner = { pid: Number(pid), start: Number(start), scope: scope ?? '0' };
const timer = setInterval(() => {
  if (!ownerGone(owner)) return;
  clearInterval(timer);
  sweepDirs([tmpdir()]);
  process.exit(0);
}, 200);

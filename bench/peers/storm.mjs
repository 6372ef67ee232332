// `node storm.mjs <command> <n>`: start n copies of command at once (each with
// one argument, its number) and exit when all have ended — so the spawning
// happens outside the measured process.
import { spawn } from 'node:child_process';

const [command, count] = process.argv.slice(2);
const n = Number(count);
let left = n;
for (let k = 0; k < n; k++) {
  const child = spawn(command, [`c${k}`], { stdio: 'ignore' });
  child.on('close', () => {
    left -= 1;
    if (left === 0) process.exit(0);
  });
}

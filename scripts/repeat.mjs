// `npm run test:repeat [n]`: run the whole suite n times (default 20) in a row
// and stop at the first failure — the flake detector behind REL-01.
import { spawnSync } from 'node:child_process';

const times = Number(process.argv[2] ?? 20);
for (let i = 1; i <= times; i++) {
  const started = Date.now();
  const run = spawnSync('npx', ['vitest', 'run', '--project', 'shimkit', '--reporter=dot'], {
    stdio: 'inherit',
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  if (run.status !== 0) {
    console.error(`\nrun ${i} of ${times} FAILED after ${seconds} s`);
    process.exit(1);
  }
  console.log(`run ${i} of ${times} passed (${seconds} s)`);
}
console.log(`\nthe suite passed ${times} times in a row`);

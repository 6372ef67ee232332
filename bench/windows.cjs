'use strict';
// The Windows lane's benchmark (run by node.exe under Wine: see
// scripts/windows/lane.sh): a mocked call through the .cmd shim, paired with
// a bare `node.exe -e 0` in alternating rounds. Writes its figures as JSON to
// the file named by argv[2].
const { spawnSync } = require('node:child_process');
const { writeFileSync } = require('node:fs');
const crossSpawn = require('cross-spawn');
const { createMockBinary } = require('../dist/index.cjs');

const ROUNDS = Number(process.env.SHIMKIT_BENCH_ROUNDS) || 15;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const time = (fn) => {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
};

const git = createMockBinary('git', { responses: [{ stdout: 'ok\n' }] }); // repeats the last response
const env = git.env();
const bare = () => spawnSync(process.execPath, ['-e', '0'], { stdio: 'ignore' });
const mocked = () => {
  const r = crossSpawn.sync('git', ['status'], { env, stdio: 'ignore' });
  if (r.status !== 0) throw new Error(`mocked call exited ${r.status}`);
};
const cmd = () => spawnSync('cmd.exe', ['/d', '/c', 'exit 0'], { stdio: 'ignore' });
bare();
mocked(); // warm up both
const shell = [];
for (let i = 0; i < 5; i += 1) shell.push(time(cmd)); // what cmd.exe alone adds to a .cmd call
const node = [];
const mock = [];
const ratios = [];
for (let i = 0; i < ROUNDS; i += 1) {
  const first = i % 2 === 0;
  const a = first ? time(bare) : time(mocked);
  const b = first ? time(mocked) : time(bare);
  const n = first ? a : b;
  const m = first ? b : a;
  node.push(n);
  mock.push(m);
  ratios.push(m / n);
}
git.dispose();
const result = {
  'mockCall.ratioToNode': Number(median(ratios).toFixed(3)),
  'mockCall.medianMs': Number(median(mock).toFixed(1)),
  'node.medianMs': Number(median(node).toFixed(1)),
  'cmdExe.medianMs': Number(median(shell).toFixed(1)),
  rounds: ROUNDS,
  runtime: `node ${process.version} under Wine (win32 ${process.arch})`,
};
writeFileSync(process.argv[2], `${JSON.stringify(result, null, 2)}\n`);

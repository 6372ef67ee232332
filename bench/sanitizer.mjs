// The leak sanitizer's cost (LK-08: ≤ 2 ms added per test when nothing
// leaked, on a 200-test file), and the cost of one check() on a machine with
// 500 more processes than usual.
//
// perTestMs is measured as a user feels it: a real vitest project, written to
// a temp dir, runs a 200-test file once with `setupFiles:
// ['shimkit/vitest/sanitize']` and once without, in alternating order, for
// several rounds. What is timed is the file's run inside the worker: from a
// beforeAll of a setup file listed before the sanitizer's to its afterAll
// (hooks run as a stack, so that window holds the sanitizer's file scope, its
// 200 aroundEach scopes and the 200 tests, and nothing of vitest's start or
// end). The wall time of `vitest run` would carry ±100s of ms of startup and
// transform noise for a difference of a few hundred ms in all; the sum of the
// JSON reporter's test durations would leave out the sanitizer's file-scope
// hooks, and its aroundEach too if vitest times the test body alone (not
// checked here). perTestMs is
// (median on − median off) ÷ 200; perTestMsPaired the median of each round's
// own difference ÷ 200. The wall times are reported too, for context only.
// Every test checks that the sanitizer is on exactly in the runs meant to have
// it, and SHIMKIT_LEAKS=fail makes any leak fail the run (and the bench).
import { spawn } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sanitize } from 'shimkit';
import { median, round } from './lib.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TESTS = 200;
const EXTRA = 500;

// The window's setup file: listed before the sanitizer's, its beforeAll runs
// first and its afterAll last (vitest's default \`sequence.hooks: 'stack'\`).
// No cookie in the env at either end says the sanitizer's file scope lies
// inside the window; the bench checks it.
const CLOCK = `import { appendFileSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
let start;
let cookieAtStart;
beforeAll(() => {
  cookieAtStart = process.env.SHIMKIT_LEAK_COOKIE;
  start = performance.now();
});
afterAll(() => {
  const ms = performance.now() - start;
  const cookieAtEnd = process.env.SHIMKIT_LEAK_COOKIE;
  appendFileSync(process.env.SANITIZER_BENCH_OUT, JSON.stringify({ ms, cookieAtStart, cookieAtEnd }));
});
`;

// Each test does a little real work and leaves nothing: every 10th runs
// \`true\` through shimkit's run(), the others a small computation.
const TEST_FILE = `import { createHash } from 'node:crypto';
import { run } from 'shimkit';
import { expect, test } from 'vitest';
for (let i = 0; i < ${TESTS}; i++) {
  test(\`test \${i}\`, async () => {
    if (i % 10 === 0) {
      const result = await run('true', [], { timeoutMs: 10_000 });
      expect(result.exitCode).toBe(0);
    } else {
      let text = String(i);
      for (let k = 0; k < 50; k++) text = createHash('sha256').update(text).digest('hex');
      expect(text).toHaveLength(64);
    }
    // The sanitizer is on (a cookie per test) exactly when its setup file is listed.
    expect(process.env.SHIMKIT_LEAK_COOKIE !== undefined).toBe(process.env.SANITIZER_BENCH_ON === '1');
  });
}
`;

function writeFixture() {
  const dir = mkdtempSync(join(tmpdir(), 'shimkit-bench-sanitizer-'));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(ROOT, join(dir, 'node_modules', 'shimkit'), 'dir');
  symlinkSync(join(ROOT, 'node_modules', 'vitest'), join(dir, 'node_modules', 'vitest'), 'dir');
  writeFileSync(join(dir, 'package.json'), '{ "type": "module", "private": true }\n');
  writeFileSync(join(dir, 'clock.js'), CLOCK);
  writeFileSync(join(dir, 'work.test.js'), TEST_FILE);
  for (const on of [true, false]) {
    const setupFiles = on ? ['./clock.js', 'shimkit/vitest/sanitize'] : ['./clock.js'];
    writeFileSync(
      join(dir, `vitest.${on ? 'on' : 'off'}.config.js`),
      `export default ${JSON.stringify({
        test: { include: ['work.test.js'], pool: 'forks', setupFiles, watch: false },
      })};\n`,
    );
  }
  return dir;
}

/** One `vitest run`: the in-worker window, and the wall time. */
function vitestRun(dir, on) {
  const out = join(dir, 'window.txt');
  const report = join(dir, 'report.json');
  rmSync(out, { force: true });
  rmSync(report, { force: true });
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'),
        'run',
        '--config',
        `vitest.${on ? 'on' : 'off'}.config.js`,
        '--reporter=json',
        `--outputFile=${report}`,
      ],
      {
        cwd: dir,
        // A leak would fail the run: the figure is for tests that leak nothing.
        env: {
          ...process.env,
          SANITIZER_BENCH_OUT: out,
          SANITIZER_BENCH_ON: on ? '1' : '0',
          SHIMKIT_LEAKS: 'fail',
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    const err = [];
    child.stderr.on('data', (d) => err.push(d));
    child.on('error', reject);
    child.on('close', (code) => {
      const wallMs = performance.now() - start;
      let passed = -1;
      try {
        passed = JSON.parse(readFileSync(report, 'utf8')).numPassedTests;
      } catch {}
      if (code !== 0 || passed !== TESTS) {
        reject(
          new Error(
            `sanitizer: vitest (${on ? 'on' : 'off'}) exited ${code}, ${passed} passed: ${Buffer.concat(err)}`,
          ),
        );
        return;
      }
      const window = JSON.parse(readFileSync(out, 'utf8'));
      if (window.cookieAtStart !== undefined || window.cookieAtEnd !== undefined) {
        reject(
          new Error(
            `sanitizer: the timed window does not hold the sanitizer's file scope: ${JSON.stringify(window)}`,
          ),
        );
        return;
      }
      resolve({ ms: window.ms, wallMs });
    });
  });
}

/** One begin()+check() pair with nothing to find, in this process: median of `pairs`. */
async function scopePair(pairs) {
  const times = [];
  for (let i = 0; i < pairs; i++) {
    const start = performance.now();
    const scope = sanitize.begin(`pair ${i}`);
    const report = await scope.check();
    times.push(performance.now() - start);
    assertClean(report);
  }
  return median(times);
}

function assertClean(report) {
  const found =
    report.processes.length + report.objects.length + report.fds.length + report.files.length;
  if (found > 0) throw new Error(`sanitizer: a scope found something:\n${sanitize.format(report)}`);
}

/** Children of `ppid` whose program is already `sleep`. */
function sleepingChildren(ppid) {
  let n = 0;
  for (const entry of readdirSync('/proc')) {
    const first = entry.charCodeAt(0);
    if (first < 48 || first > 57) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
    } catch {
      continue;
    }
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const parent = Number(stat.slice(close + 2).split(' ')[1]);
    if (parent === ppid && comm === 'sleep') n += 1;
  }
  return n;
}

/**
 * 500 `sleep 120`, backgrounded by one `sh` in its own process group (killed
 * as a group), without the scope's cookie and with no pipe to this process
 * (the fd diff would see one); resolves once /proc shows them all as sleep.
 */
async function startSleepers() {
  const sh = spawn(
    'sh',
    ['-c', `i=0; while [ $i -lt ${EXTRA} ]; do sleep 120 & i=$((i+1)); done; wait`],
    { detached: true, stdio: 'ignore', env: { PATH: process.env.PATH } },
  );
  await new Promise((resolve, reject) => {
    sh.once('spawn', resolve);
    sh.once('error', reject);
  });
  const stop = () => {
    try {
      process.kill(-sh.pid, 'SIGKILL');
    } catch {}
  };
  try {
    const until = performance.now() + 60_000;
    while (sleepingChildren(sh.pid) < EXTRA) {
      if (performance.now() > until)
        throw new Error(`sanitizer: ${EXTRA} sleeps did not start in 60 s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } catch (error) {
    stop();
    throw error;
  }
  const gone = new Promise((resolve) => sh.once('exit', resolve));
  return async () => {
    stop();
    await gone;
  };
}

async function timedCheck(scope) {
  const start = performance.now();
  const report = await scope.check();
  const ms = performance.now() - start;
  assertClean(report);
  return ms;
}

export async function sanitizer({ rounds = 11, iterations = 200 } = {}) {
  // In this process: begin()+check() with nothing to find.
  await scopePair(20); // warm: the modules and /proc paths
  const scopeMs = await scopePair(iterations);

  // check() with 500 more processes: (a) a scope opened before they started,
  // whose pid window holds them all (every environ read: the worst case);
  // (b) one opened after, whose window skips them (the common case).
  const scan = { all: [], windowed: [] };
  for (let r = 0; r < Math.max(3, Math.ceil(rounds / 2)); r++) {
    const before = sanitize.begin(`before ${r}`);
    let stop;
    try {
      stop = await startSleepers();
      scan.all.push(await timedCheck(before));
      // Opened after `before` is closed, so not nested in it (its TMPDIR, its cookie).
      for (let k = 0; k < 5; k++) {
        scan.windowed.push(await timedCheck(sanitize.begin(`after ${r}.${k}`)));
      }
    } finally {
      await before.check().catch(() => {});
      await stop?.();
    }
  }

  // 200 tests in vitest, with and without the sanitizer's setup file.
  const dir = writeFixture();
  const runs = { on: [], off: [] };
  const differences = [];
  try {
    await vitestRun(dir, true); // warm: vite's transforms, the file cache
    await vitestRun(dir, false);
    for (let r = 0; r < rounds; r++) {
      const got = {};
      for (const on of r % 2 === 0 ? [true, false] : [false, true]) {
        got[on] = await vitestRun(dir, on);
        runs[on ? 'on' : 'off'].push(got[on]);
      }
      differences.push(got[true].ms - got[false].ms);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const onMs = median(runs.on.map((x) => x.ms));
  const offMs = median(runs.off.map((x) => x.ms));
  const wallOn = median(runs.on.map((x) => x.wallMs));
  const wallOff = median(runs.off.map((x) => x.wallMs));
  return {
    perTestMs: round((onMs - offMs) / TESTS),
    // The same from each round's own pair: steadier when the machine's load
    // changes during the run (another job starting lands on both of a pair).
    perTestMsPaired: round(median(differences) / TESTS),
    fileMsOn: round(onMs, 1),
    fileMsOff: round(offMs, 1),
    wallPerTestMs: round((wallOn - wallOff) / TESTS),
    scopeMs: round(scopeMs),
    scanMs: round(median(scan.all)),
    scanMsWindowed: round(median(scan.windowed)),
  };
}

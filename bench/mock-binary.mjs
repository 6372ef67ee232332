// PERF-01 … PERF-03, PERF-06: the cost of a mocked call, measured against `node -e 0`.
import { spawn, spawnSync } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createMockBinary } from 'shimkit';
import { median, paired, pairedAsync, round, timeParallel, timeSync } from './lib.mjs';

const NODE = process.execPath;
const STORM = new URL('./peers/storm.mjs', import.meta.url).pathname;
const nodeBaseline = () => timeSync(NODE, ['-e', '0']).ms;
const responses = (n, tag = 'r') =>
  Array.from({ length: n }, (_, i) => ({ stdout: `${tag}${i + 1}\n` }));
const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
};

/**
 * PERF-01, PERF-07: one call claiming a queued response, vs starting Node
 * with nothing to do, through the runner (`fastPath: false`) and served by
 * the sh shim itself (vs `node -e 0` and vs `/bin/true`); and a call whose
 * response only the runner can serve (17 KiB of output) through a shim
 * with the fast path, vs the same call through one without: what the
 * fast path's look costs the calls it hands over.
 */
export async function mockCall({ iterations = 40 } = {}) {
  const git = createMockBinary('git', { responses: responses(iterations + 5), fastPath: false });
  const fast = createMockBinary('git', { responses: responses(3 * iterations + 10) });
  const big = { stdout: 'b'.repeat(17 * 1024) };
  const handedOver = createMockBinary('git', { responses: [big], onExhausted: big });
  const nodeOnly = createMockBinary('git', {
    responses: [big],
    onExhausted: big,
    fastPath: false,
  });
  const real = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();
  const call = (mock) => () => timeSync(mock.path, ['status', '--short']).ms;
  const trueCall = () => timeSync('/bin/true', []).ms;
  for (let i = 0; i < 3; i++) {
    nodeBaseline();
    call(git)();
    call(fast)();
    call(handedOver)();
    call(nodeOnly)();
  }
  const r = paired(iterations, nodeBaseline, call(git));
  const s = paired(iterations, nodeBaseline, call(fast));
  const t = paired(iterations, trueCall, call(fast));
  const g = paired(iterations, () => timeSync(real, ['--version']).ms, call(fast));
  const f = paired(iterations, call(nodeOnly), call(handedOver));
  for (const mock of [git, fast, handedOver, nodeOnly]) await mock.dispose();
  return {
    medianMs: round(r.subjectMedianMs, 2),
    nodeBaselineMedianMs: round(r.baselineMedianMs, 2),
    ratioToNode: round(r.ratio),
    staticMedianMs: round(s.subjectMedianMs, 2),
    staticRatioToNode: round(s.ratio),
    trueMedianMs: round(t.baselineMedianMs, 2),
    staticRatioToTrue: round(t.ratio),
    gitVersionMedianMs: round(g.baselineMedianMs, 2),
    staticRatioToGitVersion: round(g.ratio),
    handedOverMedianMs: round(f.subjectMedianMs, 2),
    handedOverRatioToRunner: round(f.ratio),
    iterations,
  };
}

/**
 * MB-13: a call whose match is the last of 1,000 routed responses (it reads
 * and tests all 1,000), vs a call with 1 queued response, paired, both
 * through the runner. PERF-09: a routed call served by the sh shim (one
 * literal route) vs `node -e 0`, and the last of 100 literal routes vs 1,
 * both served by the shell.
 */
export async function routing({ iterations = 30 } = {}) {
  const target = { match: { args: ['status', '--short'] }, stdout: 'yes\n', times: 'always' };
  const others = (n) =>
    Array.from({ length: n }, (_, i) => ({ match: { args: [`other-${i}`] }, stdout: 'no\n' }));
  const routed = createMockBinary('git', {
    responses: [...others(999), target],
    onExhausted: 'fail',
    fastPath: false,
  });
  // Both through the runner: the figure is what routing adds to its claim.
  const single = createMockBinary('git', { responses: [{ stdout: 'yes\n' }], fastPath: false });
  const sh1 = createMockBinary('git', { responses: [target], onExhausted: 'fail' });
  const sh100 = createMockBinary('git', {
    responses: [...others(99), target],
    onExhausted: 'fail',
  });
  const call = (mock) => () => {
    const r = timeSync(mock.path, ['status', '--short']);
    if (r.stdout.toString() !== 'yes\n') throw new Error(`routing bench: got ${r.stdout}`);
    return r.ms;
  };
  for (let i = 0; i < 3; i++) {
    for (const mock of [single, routed, sh1, sh100]) call(mock)();
    nodeBaseline();
  }
  const r = paired(iterations, call(single), call(routed));
  const n = paired(iterations, nodeBaseline, call(sh1));
  const h = paired(iterations, call(sh1), call(sh100));
  const byShell = [sh1, sh100].every((mock) =>
    mock.calls().every((c) => c.diagnostic === undefined && c.claimMs === undefined),
  );
  if (!byShell) throw new Error('routing bench: a routed literal call was not served by the shell');
  for (const mock of [routed, single, sh1, sh100]) await mock.dispose();
  return {
    routed1000MedianMs: round(r.subjectMedianMs, 2),
    singleMedianMs: round(r.baselineMedianMs, 2),
    ratio1000to1: round(r.ratio),
    staticMedianMs: round(n.subjectMedianMs, 2),
    nodeBaselineMedianMs: round(n.baselineMedianMs, 2),
    staticRatioToNode: round(n.ratio),
    sh: {
      routed1MedianMs: round(h.baselineMedianMs, 2),
      routed100MedianMs: round(h.subjectMedianMs, 2),
      ratio100to1: round(h.ratio),
    },
    iterations,
  };
}

/**
 * MB-16: a call answered by the live handler (the test process's function,
 * through the live channel) vs a call with a queued response, paired. The
 * calls are started asynchronously: a handler answers from the event loop.
 */
export async function handler({ iterations = 30 } = {}) {
  const live = createMockBinary('git', { onExhausted: 'fail' });
  live.handle(() => ({ stdout: 'yes\n' }));
  // Through the runner, as a handled call is: the figure is what the live channel adds.
  const queued = createMockBinary('git', { responses: [{ stdout: 'yes\n' }], fastPath: false });
  const time = async (mock) => {
    const start = process.hrtime.bigint();
    const out = await new Promise((resolve, reject) => {
      const child = spawn(mock.path, ['status'], { stdio: ['ignore', 'pipe', 'ignore'] });
      let text = '';
      child.stdout.on('data', (d) => {
        text += d;
      });
      child.on('error', reject);
      child.on('close', () => resolve(text));
    });
    if (out !== 'yes\n') throw new Error(`handler bench: got ${JSON.stringify(out)}`);
    return Number(process.hrtime.bigint() - start) / 1e6;
  };
  for (let i = 0; i < 3; i++) {
    await time(queued);
    await time(live);
  }
  const r = await pairedAsync(
    iterations,
    () => time(queued),
    () => time(live),
  );
  await live.dispose();
  await queued.dispose();
  return {
    handlerMedianMs: round(r.subjectMedianMs, 2),
    queuedMedianMs: round(r.baselineMedianMs, 2),
    ratioToQueue: round(r.ratio),
    iterations,
  };
}

/**
 * MB-15: `git --version` through a spy (the shim, the runner, then the real
 * git) vs the real `git --version`, paired. The floor is Node's start.
 */
export async function spy({ iterations = 30 } = {}) {
  const git = createMockBinary('git', { spy: true });
  const real = spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim();
  const viaSpy = () => timeSync(git.path, ['--version']).ms;
  const direct = () => timeSync(real, ['--version']).ms;
  for (let i = 0; i < 3; i++) {
    viaSpy();
    direct();
  }
  const r = paired(iterations, direct, viaSpy);
  await git.dispose();
  return {
    spyMedianMs: round(r.subjectMedianMs, 2),
    realMedianMs: round(r.baselineMedianMs, 2),
    ratioToReal: round(r.ratio),
    iterations,
  };
}

/**
 * n calls at once against n responses, vs n `node -e 0` at once, alternating
 * which goes first: throughput through the runner (`fastPath: false`) and
 * served by the sh shim, the exactly-once check for both, and (from the
 * runner's call records) how long claims took.
 */
async function parallel(n, rounds) {
  const nodeWalls = [];
  const mockWalls = [];
  const staticWalls = [];
  const ratios = [];
  const claims = [];
  const routedWalls = { runner: [], sh: [] };
  const counts = { runner: { lost: 0, duplicated: 0, timeouts: 0 } };
  counts.sh = { lost: 0, duplicated: 0, timeouts: 0 };
  counts.routedRunner = { lost: 0, duplicated: 0, timeouts: 0 };
  counts.routedSh = { lost: 0, duplicated: 0, timeouts: 0 };
  // PERF-09: call k has args [c<k>], and only response k fits it (literal
  // routes, queued in a fixed scrambled order: a call passes others' to its own).
  const routedResponses = () =>
    responses(n)
      .map((r, k) => ({ ...r, match: { args: [`c${k}`] }, at: (k * 37) % n }))
      .sort((a, b) => a.at - b.at)
      .map(({ at: _, ...r }) => r);
  const runMock = async (fastPath, routed = false) => {
    const queue = routed ? routedResponses() : responses(n);
    const git = createMockBinary('git', { responses: queue, onExhausted: 'fail', fastPath });
    const mock = await timeParallel(
      Array.from({ length: n }, (_, k) => [git.path, [`c${k}`]]),
      { allowFailure: true },
    );
    const key = routed ? (fastPath ? 'routedSh' : 'routedRunner') : fastPath ? 'sh' : 'runner';
    const count = counts[key];
    count.timeouts += mock.codes.filter((c) => c === 124).length;
    const served = new Set(mock.outputs.filter(Boolean));
    count.duplicated += mock.outputs.filter(Boolean).length - served.size;
    count.lost += responses(n).filter((r) => !served.has(r.stdout)).length;
    const calls = git.calls();
    if (calls.length !== n) count.lost += Math.abs(n - calls.length);
    if (!fastPath && !routed) for (const call of calls) claims.push(call.claimMs ?? 0);
    await git.dispose();
    return mock.ms;
  };
  const runNode = async () =>
    (await timeParallel(Array.from({ length: n }, () => [NODE, ['-e', '0']]))).ms;
  for (let i = 0; i < rounds; i++) {
    let base;
    let mock;
    let fast;
    if (i % 2 === 0) {
      base = await runNode();
      mock = await runMock(false);
      fast = await runMock(true);
    } else {
      fast = await runMock(true);
      mock = await runMock(false);
      base = await runNode();
    }
    // The routed storms alternate which path goes first, too.
    const order = i % 2 === 0 ? [false, true] : [true, false];
    for (const fastPath of order) {
      routedWalls[fastPath ? 'sh' : 'runner'].push(await runMock(fastPath, true));
    }
    nodeWalls.push(base);
    mockWalls.push(mock);
    staticWalls.push(fast);
    ratios.push(mock / base);
  }
  const wall = median(mockWalls);
  const staticWall = median(staticWalls);
  return {
    callsPerSec: round((n / wall) * 1000, 1),
    wallMs: round(wall, 1),
    nodeBaselineWallMs: round(median(nodeWalls), 1),
    ratioToNode: round(median(ratios)),
    ...counts.runner,
    // There is no lock: nothing waits for another call. What a lock wait used
    // to measure is now the claim itself, from a call's first look at the queue.
    lockWaitP99Ms: 0,
    claimP50Ms: percentile(claims, 50),
    claimP99Ms: percentile(claims, 99),
    claimMaxMs: Math.max(...claims),
    staticCallsPerSec: round((n / staticWall) * 1000, 1),
    static: {
      callsPerSec: round((n / staticWall) * 1000, 1),
      wallMs: round(staticWall, 1),
      speedup: round(wall / staticWall, 1),
      ...counts.sh,
    },
    routed: {
      callsPerSec: round((n / median(routedWalls.sh)) * 1000, 1),
      wallMs: round(median(routedWalls.sh), 1),
      runnerWallMs: round(median(routedWalls.runner), 1),
      speedup: round(median(routedWalls.runner) / median(routedWalls.sh), 1),
      lost: counts.routedSh.lost + counts.routedRunner.lost,
      duplicated: counts.routedSh.duplicated + counts.routedRunner.duplicated,
      timeouts: counts.routedSh.timeouts + counts.routedRunner.timeouts,
    },
    rounds,
  };
}

/** PERF-02: 64 calls at once. */
export const parallel64 = ({ rounds = 7 } = {}) => parallel(64, rounds);

/** PERF-06: 256 calls at once, with default options. */
export const parallel256 = ({ rounds = 5 } = {}) => parallel(256, rounds);

/**
 * MB-19: the largest event-loop stall of the test process while a 256-way
 * storm runs (spawned from another process, so spawning is not what stalls
 * it) and the test process calls enqueue() every 5 ms (and, in a second
 * figure, calls() and queuedCount() too). On 2 cores with 256 busy processes the scheduler alone delays a
 * process by tens of ms at times, so the same storm is run with the test
 * process idle (timers only) as a baseline, and each figure is the median
 * over `rounds` storms of that storm's largest stall (the worst is reported too).
 */
export async function enqueueStall({ calls = 256, rounds = 3 } = {}) {
  const measure = async (work) => {
    const git = createMockBinary('git', { responses: responses(calls) });
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const storm = spawn(NODE, [STORM, git.path, String(calls)], { stdio: 'ignore' });
    const done = new Promise((resolve) => storm.on('close', resolve));
    let ticks = 0;
    let ticking = true;
    const tick = () => {
      if (!ticking) return;
      if (work !== 'idle') git.enqueue({ stdout: `late${ticks}\n` });
      if (work === 'enqueue+read') {
        git.calls();
        git.queuedCount();
      }
      ticks += 1;
      setTimeout(tick, 5);
    };
    tick();
    await done;
    ticking = false;
    delay.disable();
    await git.dispose();
    return { maxMs: delay.max / 1e6, ticks };
  };
  const runs = { idle: [], enqueue: [], 'enqueue+read': [] };
  for (let i = 0; i < rounds; i++) {
    for (const work of Object.keys(runs)) runs[work].push(await measure(work));
  }
  const typical = (work) => round(median(runs[work].map((r) => r.maxMs)), 1);
  const worst = (work) => round(Math.max(...runs[work].map((r) => r.maxMs)), 1);
  return {
    maxMs: typical('enqueue'),
    worstMs: worst('enqueue'),
    withReadsMaxMs: typical('enqueue+read'),
    withReadsWorstMs: worst('enqueue+read'),
    idleBaselineMaxMs: typical('idle'),
    idleBaselineWorstMs: worst('idle'),
    enqueuesPerStorm: Math.round(median(runs.enqueue.map((r) => r.ticks))),
    rounds,
  };
}

/**
 * PERF-03: the claim cost as the queue grows: 1,000 queued responses vs 1,
 * and 50 × 10 MB queued behind the response a call takes vs 1.
 */
export async function queueGrowth({ iterations = 30 } = {}) {
  // The runner's claim (the sh shim's search for the first free response is the same).
  const small = createMockBinary('small', { fastPath: false });
  const large = createMockBinary('large', {
    responses: responses(1000 + iterations + 5),
    fastPath: false,
  });
  const big = createMockBinary('big', { responses: responses(iterations + 5), fastPath: false });
  const tenMB = 'z'.repeat(10 * 1024 * 1024);
  for (let i = 0; i < 50; i++) big.enqueue({ stdout: tenMB });
  const callSmall = () => {
    small.enqueue({ stdout: 'x\n' }); // exactly one response queued at each call
    return timeSync(small.path, ['x']).ms;
  };
  const callLarge = () => timeSync(large.path, ['x']).ms;
  const callBig = () => timeSync(big.path, ['x']).ms;
  for (let i = 0; i < 3; i++) {
    callSmall();
    callLarge();
  }
  const r = paired(iterations, callSmall, callLarge);
  const b = paired(iterations, callSmall, callBig);
  await small.dispose();
  await large.dispose();
  await big.dispose();
  return {
    ratio1000to1: round(r.ratio),
    ratioBigQueue: round(b.ratio),
    medianMs1: round(r.baselineMedianMs, 2),
    medianMs1000: round(r.subjectMedianMs, 2),
    medianMsBigQueue: round(b.subjectMedianMs, 2),
    iterations,
  };
}

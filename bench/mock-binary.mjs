// PERF-01 … PERF-03: the cost of a mocked call, measured against `node -e 0`.
import { createMockBinary } from 'shimkit';
import { median, paired, round, timeParallel, timeSync } from './lib.mjs';

const NODE = process.execPath;
const nodeBaseline = () => timeSync(NODE, ['-e', '0']).ms;
const responses = (n, tag = 'r') =>
  Array.from({ length: n }, (_, i) => ({ stdout: `${tag}${i + 1}\n` }));

/** PERF-01: one call claiming a queued response, vs starting Node with nothing to do. */
export async function mockCall({ iterations = 40 } = {}) {
  const git = createMockBinary('git', { responses: responses(iterations + 5) });
  for (let i = 0; i < 3; i++) {
    nodeBaseline();
    timeSync(git.path, ['warm-up']);
  }
  const r = paired(iterations, nodeBaseline, () => timeSync(git.path, ['status', '--short']).ms);
  await git.dispose();
  return {
    medianMs: round(r.subjectMedianMs, 2),
    nodeBaselineMedianMs: round(r.baselineMedianMs, 2),
    ratioToNode: round(r.ratio),
    iterations,
  };
}

/** PERF-02: 64 calls at once against 64 responses: throughput and the exactly-once check. */
export async function parallel64({ rounds = 5 } = {}) {
  const n = 64;
  const nodeWalls = [];
  const mockWalls = [];
  const ratios = [];
  let lost = 0;
  let duplicated = 0;
  for (let i = 0; i < rounds; i++) {
    const git = createMockBinary('git', { responses: responses(n), onExhausted: 'fail' });
    const runNode = () => timeParallel(Array.from({ length: n }, () => [NODE, ['-e', '0']]));
    const runMock = () => timeParallel(Array.from({ length: n }, (_, k) => [git.path, [`c${k}`]]));
    let base;
    let mock;
    if (i % 2 === 0) {
      base = await runNode();
      mock = await runMock();
    } else {
      mock = await runMock();
      base = await runNode();
    }
    nodeWalls.push(base.ms);
    mockWalls.push(mock.ms);
    ratios.push(mock.ms / base.ms);
    const served = new Set(mock.outputs);
    duplicated += mock.outputs.length - served.size;
    lost += responses(n).filter((r) => !served.has(r.stdout)).length;
    if (git.callCount() !== n) lost += Math.abs(n - git.callCount());
    await git.dispose();
  }
  const wall = median(mockWalls);
  return {
    callsPerSec: round((n / wall) * 1000, 1),
    wallMs: round(wall, 1),
    nodeBaselineWallMs: round(median(nodeWalls), 1),
    ratioToNode: round(median(ratios)),
    lost,
    duplicated,
    rounds,
  };
}

/** PERF-03: the claim cost as the queue grows, 1 vs 1,000 queued responses. */
export async function queueGrowth({ iterations = 30 } = {}) {
  const small = createMockBinary('small');
  const large = createMockBinary('large', { responses: responses(1000 + iterations + 5) });
  const callSmall = () => {
    small.enqueue({ stdout: 'x\n' }); // exactly one response queued at each call
    return timeSync(small.path, ['x']).ms;
  };
  const callLarge = () => timeSync(large.path, ['x']).ms;
  for (let i = 0; i < 3; i++) {
    callSmall();
    callLarge();
  }
  const r = paired(iterations, callSmall, callLarge);
  await small.dispose();
  await large.dispose();
  return {
    ratio1000to1: round(r.ratio),
    medianMs1: round(r.baselineMedianMs, 2),
    medianMs1000: round(r.subjectMedianMs, 2),
    iterations,
  };
}

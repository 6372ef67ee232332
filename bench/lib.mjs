// Timing helpers for the benchmarks: real processes, wall-clock time, and
// ratios against a baseline measured in the same run (paired, alternating order).
import { spawn, spawnSync } from 'node:child_process';

export function timeSync(command, args, options = {}) {
  const start = process.hrtime.bigint();
  const result = spawnSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  }
  return { ms, stdout: result.stdout };
}

/**
 * Run all commands at once; resolve with the wall time, each one's stdout
 * (empty for a failed one) and exit code. A non-zero exit rejects unless
 * `allowFailure` (then it is counted by the caller).
 */
export async function timeParallel(commands, { allowFailure = false } = {}) {
  const start = process.hrtime.bigint();
  const results = await Promise.all(
    commands.map(
      ([command, args]) =>
        new Promise((resolve, reject) => {
          const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
          const out = [];
          const err = [];
          child.stdout.on('data', (d) => out.push(d));
          child.stderr.on('data', (d) => err.push(d));
          child.on('error', reject);
          child.on('close', (code) => {
            if (code === 0 || allowFailure) {
              resolve({ code, stdout: code === 0 ? Buffer.concat(out).toString() : '' });
            } else {
              reject(new Error(`${command} exited ${code}: ${Buffer.concat(err)}`));
            }
          });
        }),
    ),
  );
  return {
    ms: Number(process.hrtime.bigint() - start) / 1e6,
    outputs: results.map((r) => r.stdout),
    codes: results.map((r) => r.code),
  };
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export const round = (value, digits = 3) => Number(value.toFixed(digits));

/** `paired()` for async measurements (calls the test process must answer from its event loop). */
export async function pairedAsync(iterations, baseline, subject) {
  const base = [];
  const subj = [];
  const ratios = [];
  for (let i = 0; i < iterations; i++) {
    let b;
    let s;
    if (i % 2 === 0) {
      b = await baseline();
      s = await subject();
    } else {
      s = await subject();
      b = await baseline();
    }
    base.push(b);
    subj.push(s);
    ratios.push(s / b);
  }
  return { baselineMedianMs: median(base), subjectMedianMs: median(subj), ratio: median(ratios) };
}

/**
 * Measure `subject` against `baseline` in pairs, alternating which runs first,
 * and return both medians and the median of the paired ratios.
 */
export function paired(iterations, baseline, subject) {
  const base = [];
  const subj = [];
  const ratios = [];
  for (let i = 0; i < iterations; i++) {
    let b;
    let s;
    if (i % 2 === 0) {
      b = baseline();
      s = subject();
    } else {
      s = subject();
      b = baseline();
    }
    base.push(b);
    subj.push(s);
    ratios.push(s / b);
  }
  return { baselineMedianMs: median(base), subjectMedianMs: median(subj), ratio: median(ratios) };
}

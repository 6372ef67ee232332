// Test processes: what shimkit's capture (bounded tails, text windows) and
// lifecycle (command lookup, process group, close) cost against plain
// child_process, paired in alternating order, median of the per-round ratios.
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { run, spawnProcess } from 'shimkit';
import { median, round } from './lib.mjs';

const MiB = 1024 * 1024;
const execFileAsync = promisify(execFile);

function plainOutput(bytes) {
  return new Promise((resolve, reject) => {
    const child = spawn('head', ['-c', String(bytes), '/dev/zero'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child.stdout.on('data', () => {});
    child.on('error', reject);
    child.on('close', resolve);
  });
}

async function shimkitOutput(bytes) {
  const p = spawnProcess('head', ['-c', String(bytes), '/dev/zero'], { stdin: 'ignore' });
  await p.wait();
  await p.close();
}

async function timed(fn) {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/** 256 MiB through stdout: spawnProcess (kept as a 64 KiB tail) vs a plain spawn that discards it. */
export async function processOutput({ rounds = 7, mib = 256 } = {}) {
  const bytes = mib * MiB;
  const plain = [];
  const shimkit = [];
  const ratios = [];
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? ['plain', 'shimkit'] : ['shimkit', 'plain'];
    const got = {};
    for (const kind of order) {
      got[kind] = await timed(() => (kind === 'plain' ? plainOutput(bytes) : shimkitOutput(bytes)));
    }
    plain.push(got.plain);
    shimkit.push(got.shimkit);
    ratios.push(got.shimkit / got.plain);
  }
  return {
    plainMiBps: round(mib / (median(plain) / 1000), 1),
    shimkitMiBps: round(mib / (median(shimkit) / 1000), 1),
    ratioToPlain: round(median(ratios)),
  };
}

/** A short command to its end: run() (lookup, group, close) vs execFile. */
export async function processRun({ rounds = 40 } = {}) {
  const plain = [];
  const shimkit = [];
  const ratios = [];
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? ['plain', 'shimkit'] : ['shimkit', 'plain'];
    const got = {};
    for (const kind of order) {
      got[kind] = await timed(() =>
        kind === 'plain' ? execFileAsync('true') : run('true', [], { timeoutMs: 10_000 }),
      );
    }
    plain.push(got.plain);
    shimkit.push(got.shimkit);
    ratios.push(got.shimkit / got.plain);
  }
  return {
    execFileMedianMs: round(median(plain), 2),
    runMedianMs: round(median(shimkit), 2),
    ratioToExecFile: round(median(ratios)),
  };
}

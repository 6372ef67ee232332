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

/**
 * Time `plain` and `shimkit` once a round, in alternating order; return the
 * median time of each and the median of the per-round ratios shimkit ÷ plain.
 */
async function paired(rounds, plain, shimkit) {
  const times = { plain: [], shimkit: [] };
  const ratios = [];
  for (let r = 0; r < rounds; r++) {
    const got = {};
    for (const kind of r % 2 === 0 ? ['plain', 'shimkit'] : ['shimkit', 'plain']) {
      const start = performance.now();
      await (kind === 'plain' ? plain() : shimkit());
      got[kind] = performance.now() - start;
      times[kind].push(got[kind]);
    }
    ratios.push(got.shimkit / got.plain);
  }
  return { plainMs: median(times.plain), shimkitMs: median(times.shimkit), ratio: median(ratios) };
}

/** 256 MiB through stdout: spawnProcess (kept as a 64 KiB tail) vs a plain spawn that discards it. */
export async function processOutput({ rounds = 7, mib = 256 } = {}) {
  const bytes = mib * MiB;
  const m = await paired(
    rounds,
    () => plainOutput(bytes),
    () => shimkitOutput(bytes),
  );
  return {
    plainMiBps: round(mib / (m.plainMs / 1000), 1),
    shimkitMiBps: round(mib / (m.shimkitMs / 1000), 1),
    ratioToPlain: round(m.ratio),
  };
}

/** A short command to its end: run() (lookup, group, close) vs execFile. */
export async function processRun({ rounds = 40 } = {}) {
  const m = await paired(
    rounds,
    () => execFileAsync('true'),
    () => run('true', [], { timeoutMs: 10_000 }),
  );
  return {
    execFileMedianMs: round(m.plainMs, 2),
    runMedianMs: round(m.shimkitMs, 2),
    ratioToExecFile: round(m.ratio),
  };
}

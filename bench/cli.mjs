// The `shimkit` command's cost per invocation, against `node -e 0` in the same
// run: what a bash, pytest or Go suite pays for each `shimkit enqueue` (and
// `calls`, `verify`) it runs. Through the built dist/cli.js, as installed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { paired, round, timeSync } from './lib.mjs';

const NODE = process.execPath;
const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const nodeBaseline = () => timeSync(NODE, ['-e', '0']).ms;

/**
 * `shimkit enqueue D git --stdout …` (parse, validate, append under the
 * writer lock), `shimkit calls D git` on a mock with 20 recorded calls, and
 * `shimkit --version` (the dispatcher alone), each paired with `node -e 0`.
 */
export async function cli({ iterations = 30 } = {}) {
  const parent = mkdtempSync(join(tmpdir(), 'shimkit-bench-cli-'));
  try {
    const dir = join(parent, 'mocks');
    timeSync(NODE, [CLI, 'mock', 'git', '--dir', dir]);
    for (let i = 0; i < 20; i++) timeSync(join(dir, 'bin', 'git'), [`c${i}`]);
    let n = 0;
    const enqueue = paired(
      iterations,
      nodeBaseline,
      () => timeSync(NODE, [CLI, 'enqueue', dir, 'git', '--stdout', `r${n++}\n`]).ms,
    );
    const calls = paired(
      iterations,
      nodeBaseline,
      () => timeSync(NODE, [CLI, 'calls', dir, 'git']).ms,
    );
    const version = paired(iterations, nodeBaseline, () => timeSync(NODE, [CLI, '--version']).ms);
    return {
      nodeMedianMs: round(enqueue.baselineMedianMs, 1),
      enqueueMs: round(enqueue.subjectMedianMs, 1),
      enqueueRatioToNode: round(enqueue.ratio),
      callsMs: round(calls.subjectMedianMs, 1),
      callsRatioToNode: round(calls.ratio),
      versionRatioToNode: round(version.ratio),
    };
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
}

// PTY processes (requirement SP-13): how long spawnProcess({ pty }) takes to
// the program's first screen, against a pipe spawnProcess of the same program
// to its first output, paired in alternating order (median of the per-round
// ratios). Two programs: `sh` (a start of ~2 ms, so the helper's own start
// is nearly all of it) and a Node CLI (what agent CLIs and TUIs are).
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnProcess } from 'shimkit';
import { pairedAsync, round } from './lib.mjs';

async function firstScreen(command, args, pty) {
  const start = performance.now();
  const p = spawnProcess(command, args, pty ? { pty: { cols: 80, rows: 24 } } : {});
  if (pty) await p.waitForScreen('ready', { timeoutMs: 20_000 });
  else await p.waitForOutput('ready', { timeoutMs: 20_000 });
  const ms = performance.now() - start;
  await p.close({ graceMs: 0 });
  return ms;
}

async function paired(rounds, command, args) {
  await firstScreen(command, args, true); // warm-up: loads the emulator once
  const m = await pairedAsync(
    rounds,
    () => firstScreen(command, args, false),
    () => firstScreen(command, args, true),
  );
  return {
    pipeMs: round(m.baselineMedianMs, 2),
    spawnMs: round(m.subjectMedianMs, 2),
    ratioToPipe: round(m.ratio),
  };
}

export async function pty({ rounds = 21 } = {}) {
  const cli = join(tmpdir(), `shimkit-bench-tui-${process.pid}.mjs`);
  writeFileSync(cli, "process.stdout.write('ready\\n'); process.stdin.resume();\n");
  const node = await paired(rounds, process.execPath, [cli]);
  const sh = await paired(rounds, 'sh', ['-c', 'echo ready; read line']);
  return { backend: 'python', node, sh };
}

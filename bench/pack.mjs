// What `verifyPackedInstall()` adds to a test file: shimkit itself packed,
// installed into a fresh sandboxed project, its bin run and its three entry
// points loaded and type-checked, as .ci/smoke-pack does, online (from the
// registry the host's npm uses) and offline (from a copy of the host cache),
// in alternating order. Wall time of the whole check, and its pack and
// install steps.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { formatPackedInstallReport, verifyPackedInstall } from 'shimkit';
import { median, round } from './lib.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

/** The options .ci/smoke-pack passes to `shimkit verify-pack`. */
const options = (offline) => ({
  packageDir: ROOT,
  offline,
  run: [{ bin: 'shimkit', args: ['--version'], expect: { stdout: pkg.version } }],
  peers: { vitest: pkg.devDependencies.vitest },
  imports: { typesOnly: ['./vitest'] },
  preload: 'globalThis.expect ??= { extend() {} }',
});

async function once(offline) {
  const start = performance.now();
  const report = await verifyPackedInstall(options(offline));
  const ms = performance.now() - start;
  if (!report.ok) throw new Error(`packInstall: ${formatPackedInstallReport(report)}`);
  return { ms, packMs: report.packMs, installMs: report.installMs };
}

export async function packInstall({ rounds = 5 } = {}) {
  await once(true); // warm: the first pack builds nothing, but fills the OS's file cache
  const runs = { online: [], offline: [] };
  for (let r = 0; r < rounds; r++) {
    for (const mode of r % 2 === 0 ? ['online', 'offline'] : ['offline', 'online']) {
      runs[mode].push(await once(mode === 'offline'));
    }
  }
  const figures = (list) => ({
    ms: round(median(list.map((x) => x.ms)), 0),
    packMs: round(median(list.map((x) => x.packMs)), 0),
    installMs: round(median(list.map((x) => x.installMs)), 0),
    maxMs: round(Math.max(...list.map((x) => x.ms)), 0),
  });
  return { rounds, online: figures(runs.online), offline: figures(runs.offline) };
}

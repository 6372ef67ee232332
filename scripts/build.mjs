// `node scripts/build.mjs --if-stale`: build dist/ with tsup only when what it
// is built from changed (npm test, npm run demo and npm run bench use it, so a
// second run does not spend ~12 s rebuilding). Without --if-stale it always
// builds (npm run build). `--no-dts` leaves out the .d.ts files, which take 10
// of the 12 s and which nothing but a packed package reads (npm test, demo);
// a build without them is stale to one that wants them (prepack, npm run build).
//
// Stale means: the sha-256 of every input file's path and bytes (src/, shims/,
// the tsup and TypeScript configs, package.json and package-lock.json) differs
// from the one recorded by the last build, or a file that build wrote is gone.
// The record is dist/build.cache, which package.json's "files" leaves out.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');
const RECORD = join(DIST, 'build.cache');
const INPUTS = [
  'src',
  'shims',
  'tsup.config.ts',
  'tsconfig.json',
  'package.json',
  'package-lock.json',
];

function files(path) {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => files(join(path, name)));
}

function inputsHash() {
  const hash = createHash('sha256');
  for (const file of INPUTS.flatMap((input) => files(join(ROOT, input)))) {
    hash.update(`${relative(ROOT, file)}\0`);
    hash.update(readFileSync(file));
    hash.update('\0');
  }
  return hash.digest('hex');
}

function fresh(hash, dts) {
  try {
    const record = JSON.parse(readFileSync(RECORD, 'utf8'));
    if (dts && record.dts !== true) return false;
    return record.inputs === hash && record.outputs.every((f) => existsSync(join(DIST, f)));
  } catch {
    return false; // no record, or not ours: build
  }
}

const ifStale = process.argv.includes('--if-stale');
const dts = !process.argv.includes('--no-dts');
const hash = inputsHash();
if (ifStale && fresh(hash, dts)) {
  if (!process.argv.includes('--silent')) {
    console.error('dist/ is up to date with src/ (scripts/build.mjs); not rebuilding.');
  }
  process.exit(0);
}
const require = createRequire(import.meta.url);
const tsupBin = join(
  dirname(require.resolve('tsup/package.json')),
  require('tsup/package.json').bin.tsup,
);
// tsup's report goes to stderr: stdout stays clean for `npm pack --json`, which
// runs this through prepack and prints its JSON on the same stdout.
const tsup = spawnSync(
  process.execPath,
  [tsupBin, ...process.argv.slice(2).filter((a) => a !== '--if-stale')],
  { cwd: ROOT, stdio: ['inherit', 2, 2] },
);
if (tsup.status !== 0) process.exit(tsup.status ?? 1);
const outputs = files(DIST)
  .map((file) => relative(DIST, file))
  .filter((f) => f !== 'build.cache');
writeFileSync(RECORD, `${JSON.stringify({ inputs: hash, dts, outputs })}\n`);

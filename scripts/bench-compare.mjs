// `npm run bench:compare -- <ref> [--against <ref>] [--only <suite>…] [--rounds N] [--iterations N] [--json FILE] [--install]`
//
// Measures two builds of shimkit in one run: <ref> (any commit git knows) and
// the working tree (or --against another ref). Each is built in a directory of
// its own (git archive, then its own build; the ref's builds are kept in the
// temp dir under their commit, so bisecting rebuilds nothing twice), the
// working tree's bench/ is copied into it — both sides run the same
// measurements — and `node bench/run.mjs --rounds 1 --json …` runs on each
// side in turn, alternating which goes first, --rounds times (default 8).
// Every figure is then compared over those rounds: each side's median and
// range, the change of the median, the exact Mann–Whitney p-value and a 95 %
// bootstrap interval for new ÷ old (bench/stats.mjs); a change is flagged
// only when both say it is beyond the noise.
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compareFigure, smallestP, stars } from '../bench/stats.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const USAGE =
  'usage: npm run bench:compare -- <ref> [--against <ref>] [--only <suite>[,<suite>…]] [--rounds N] [--iterations N] [--json FILE] [--install]';

function fail(message, code = 2) {
  console.error(`bench:compare: ${message}`);
  process.exit(code);
}

function parse(argv) {
  const options = { only: [], rounds: 8, install: false };
  const positional = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined || v.startsWith('--')) fail(`${arg} needs a value\n${USAGE}`);
      return v;
    };
    if (arg === '--only') options.only.push(...value().split(',').filter(Boolean));
    else if (arg === '--rounds') options.rounds = Number(value());
    else if (arg === '--iterations') options.iterations = Number(value());
    else if (arg === '--against') options.against = value();
    else if (arg === '--json') options.json = value();
    else if (arg === '--install') options.install = true;
    else if (arg === '--help' || arg === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else if (arg.startsWith('--')) fail(`unknown option ${arg}\n${USAGE}`);
    else positional.push(arg);
  }
  if (positional.length !== 1) fail(`name one ref to compare with\n${USAGE}`);
  if (!Number.isInteger(options.rounds) || options.rounds < 2) {
    fail(`--rounds takes a whole number of at least 2, got ${options.rounds}`);
  }
  if (
    options.iterations !== undefined &&
    !(Number.isInteger(options.iterations) && options.iterations > 0)
  ) {
    fail(`--iterations takes a whole number above 0, got ${options.iterations}`);
  }
  options.ref = positional[0];
  return options;
}

function git(args) {
  const r = spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

function commitOf(ref) {
  const sha = git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  if (!sha) fail(`git knows no commit named ${JSON.stringify(ref)} in ${ROOT}`);
  return sha;
}

function step(command, args, cwd, what) {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) {
    fail(
      `${what} failed (${command} ${args.join(' ')} in ${cwd}, exit ${r.status ?? r.signal}):\n${`${r.stdout}${r.stderr}`.trim().slice(-2000)}`,
      1,
    );
  }
}

/** The build of one commit, in the temp dir under its sha: made once, kept for the next compare. */
function buildOf(sha, install) {
  const home = join(tmpdir(), `shimkit-bench-compare-${process.getuid?.() ?? 'u'}`);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const dir = join(home, sha.slice(0, 12));
  if (existsSync(join(dir, '.built'))) return dir;
  const work = mkdtempSync(join(home, 'building-'));
  // fail() exits at once: a half-made build goes with it (a finished one was renamed away).
  process.on('exit', () => rmSync(work, { recursive: true, force: true }));
  process.stderr.write(`bench:compare: building ${sha.slice(0, 12)} in ${dir}…\n`);
  const archive = spawnSync('git', ['archive', '--format=tar', sha], {
    cwd: ROOT,
    maxBuffer: 1 << 30,
  });
  if (archive.status !== 0) fail(`git archive ${sha} failed: ${archive.stderr}`, 1);
  const untar = spawnSync('tar', ['-x', '-C', work], { input: archive.stdout });
  if (untar.status !== 0) fail(`unpacking ${sha} failed: ${untar.stderr}`, 1);
  if (install) {
    step(
      'npm',
      ['ci', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'],
      work,
      `npm ci for ${sha.slice(0, 12)}`,
    );
  } else {
    // The working tree's: the bench that runs is the working tree's too (and its peers' packages).
    symlinkSync(join(ROOT, 'node_modules'), join(work, 'node_modules'), 'dir');
    const lock = join(work, 'package-lock.json');
    if (
      !existsSync(lock) ||
      readFileSync(lock, 'utf8') !== readFileSync(join(ROOT, 'package-lock.json'), 'utf8')
    ) {
      process.stderr.write(
        `bench:compare: ${sha.slice(0, 12)} locks other packages; it is built with the working tree's node_modules (--install: its own)\n`,
      );
    }
  }
  if (existsSync(join(work, 'scripts', 'build.mjs'))) {
    step(
      process.execPath,
      ['scripts/build.mjs', '--no-dts', '--silent'],
      work,
      `building ${sha.slice(0, 12)}`,
    );
  } else {
    step('npm', ['run', 'build'], work, `building ${sha.slice(0, 12)}`);
  }
  writeFileSync(join(work, '.built'), `${sha}\n`);
  rmSync(dir, { recursive: true, force: true });
  renameSync(work, dir);
  return dir;
}

/** The working tree, built if stale. */
function buildWorkingTree() {
  step(
    process.execPath,
    ['scripts/build.mjs', '--if-stale', '--no-dts', '--silent'],
    ROOT,
    'building the working tree',
  );
  return ROOT;
}

/** Both sides measure with the working tree's bench/ (a ref's own may lack a suite or measure differently). */
function useOurBench(dir) {
  if (dir === ROOT) return;
  rmSync(join(dir, 'bench'), { recursive: true, force: true });
  cpSync(join(ROOT, 'bench'), join(dir, 'bench'), {
    recursive: true,
    filter: (src) => !src.endsWith('results.json'),
  });
}

function measure(side, only, out) {
  const r = spawnSync(
    process.execPath,
    [
      'bench/run.mjs',
      '--rounds',
      '1',
      ...(options.iterations === undefined ? [] : ['--iterations', String(options.iterations)]),
      '--json',
      out,
      ...only,
    ],
    { cwd: side.dir, encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] },
  );
  if (r.status !== 0) {
    fail(
      `the bench failed on ${side.label} (exit ${r.status ?? r.signal}):\n${r.stderr.trim().slice(-3000)}`,
      1,
    );
  }
  return JSON.parse(readFileSync(out, 'utf8'));
}

function flatten(prefix, value, into) {
  if (typeof value === 'number') into.set(prefix, value);
  else if (typeof value === 'object' && value !== null) {
    for (const [key, inner] of Object.entries(value))
      flatten(prefix ? `${prefix}.${key}` : key, inner, into);
  }
  return into;
}

const fmt = (v) => {
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(2);
  return String(Number(v.toPrecision(4)));
};

function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const options = parse(process.argv.slice(2));
const oldSha = commitOf(options.ref);
const old = {
  label: `${options.ref} (${oldSha.slice(0, 12)})`,
  dir: buildOf(oldSha, options.install),
};
let now;
if (options.against) {
  const sha = commitOf(options.against);
  now = { label: `${options.against} (${sha.slice(0, 12)})`, dir: buildOf(sha, options.install) };
} else {
  const head = git(['rev-parse', '--short=12', 'HEAD']) ?? '?';
  const dirty = git(['status', '--porcelain', '--untracked-files=no']) ? ' + changes' : '';
  now = { label: `working tree (${head}${dirty})`, dir: buildWorkingTree() };
}
useOurBench(old.dir);
useOurBench(now.dir);

const scratch = mkdtempSync(join(tmpdir(), 'shimkit-bench-compare-run-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true })); // fail() exits at once
const samples = { old: new Map(), new: new Map() };
const load = [loadavg()[0]];
try {
  for (let r = 0; r < options.rounds; r++) {
    const order = r % 2 === 0 ? ['old', 'new'] : ['new', 'old'];
    for (const key of order) {
      const side = key === 'old' ? old : now;
      process.stderr.write(`bench:compare: round ${r + 1} of ${options.rounds}, ${side.label}…\n`);
      const figures = flatten(
        '',
        measure(side, options.only, join(scratch, `${key}-${r}.json`)),
        new Map(),
      );
      for (const [name, value] of figures) {
        if (!samples[key].has(name)) samples[key].set(name, []);
        samples[key].get(name).push(value);
      }
    }
    load.push(loadavg()[0]);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

const results = [];
for (const [name, oldValues] of samples.old) {
  const newValues = samples.new.get(name);
  if (!newValues) continue;
  results.push({ figure: name, ...compareFigure(oldValues, newValues) });
}
const onlyOneSide = [
  ...[...samples.old.keys()].filter((k) => !samples.new.has(k)).map((k) => `${k} (old only)`),
  ...[...samples.new.keys()].filter((k) => !samples.old.has(k)).map((k) => `${k} (new only)`),
];

const rows = [
  ['figure', 'old median (range)', 'new median (range)', 'change', 'p', '95 % new÷old', ''],
];
for (const r of results) {
  rows.push([
    r.figure,
    `${fmt(r.old.median)} (${fmt(r.old.min)}–${fmt(r.old.max)})`,
    `${fmt(r.new.median)} (${fmt(r.new.min)}–${fmt(r.new.max)})`,
    r.change === undefined ? '' : `${r.change >= 0 ? '+' : ''}${(r.change * 100).toFixed(1)} %`,
    `${Number.isNaN(r.p) ? '' : r.p.toFixed(3)} ${stars(r.p)}`.trimEnd(),
    r.interval ? `${fmt(r.interval[0])}–${fmt(r.interval[1])}` : '',
    r.changed ? 'CHANGED' : '',
  ]);
}
console.log(`old: ${old.label}\nnew: ${now.label}`);
console.log(
  `${options.rounds} rounds each, alternating; load ${Math.min(...load).toFixed(2)}–${Math.max(...load).toFixed(2)}; the smallest p ${options.rounds} rounds can give is ${smallestP(options.rounds, options.rounds).toPrecision(2)}\n`,
);
console.log(table(rows));
if (onlyOneSide.length > 0) console.log(`\nmeasured on one side only: ${onlyOneSide.join(', ')}`);
const changed = results.filter((r) => r.changed).length;
console.log(
  `\n${changed} of ${results.length} figures changed beyond the noise (p < 0.05 and the interval leaves out 1; * p < 0.05, ** p < 0.01, *** p < 0.001).`,
);
// As Node's compare.R warns: many figures, many chances for one to pass the test by luck.
if (results.length >= 10) {
  console.log(
    `Of ${results.length} figures that did not change, about ${(results.length * 0.05).toFixed(1)} would pass p < 0.05 by chance alone: a lone * among many is weak evidence; rerun with more --rounds, or --only the figure.`,
  );
}
if (options.json) {
  writeFileSync(
    options.json,
    `${JSON.stringify({ old: old.label, new: now.label, rounds: options.rounds, load, results }, null, 2)}\n`,
  );
}

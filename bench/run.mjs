// `npm run bench`: measures, prints a table, and merges the figures into
// bench/results.json (other benchmark suites keep their own sections).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';

const RESULTS = new URL('./results.json', import.meta.url);

// Variables that change how Node starts (NODE_EXTRA_CA_CERTS alone adds ~30 ms
// to every `node -e 0` here) are removed before anything runs: the shim moves
// them aside for its runner, so leaving them would flatter every ratio to Node.
const NODE_VARS =
  /^(NODE_|UV_THREADPOOL_SIZE$|UV_USE_IO_URING$|OPENSSL_CONF$|FORCE_COLOR$|NO_COLOR$)/;
const strippedEnv = Object.keys(process.env).filter((k) => NODE_VARS.test(k));
for (const key of strippedEnv) delete process.env[key];

const targets = {
  'mockCall.ratioToNode': (v) => v <= 1.1,
  'routing.ratio1000to1': (v) => v <= 1.1,
  'routing.staticRatioToNode': (v) => v <= 0.1,
  'routing.sh.ratio100to1': (v) => v <= 1.5,
  'parallel64.routed.speedup': (v) => v >= 8,
  'parallel64.routed.lost': (v) => v === 0,
  'parallel64.routed.duplicated': (v) => v === 0,
  'parallel64.routed.timeouts': (v) => v === 0,
  'parallel256.routed.lost': (v) => v === 0,
  'parallel256.routed.duplicated': (v) => v === 0,
  'parallel256.routed.timeouts': (v) => v === 0,
  'handler.ratioToQueue': (v) => v <= 1.1,
  'mockCall.staticRatioToNode': (v) => v <= 0.1,
  'mockCall.handedOverRatioToRunner': (v) => v <= 1.05,
  'parallel64.ratioToNode': (v) => v <= 1.1,
  'parallel64.static.speedup': (v) => v >= 10,
  'parallel64.static.lost': (v) => v === 0,
  'parallel64.static.duplicated': (v) => v === 0,
  'parallel64.static.timeouts': (v) => v === 0,
  'parallel256.static.lost': (v) => v === 0,
  'parallel256.static.duplicated': (v) => v === 0,
  'parallel256.static.timeouts': (v) => v === 0,
  'parallel64.lost': (v) => v === 0,
  'parallel64.duplicated': (v) => v === 0,
  'parallel64.timeouts': (v) => v === 0,
  'parallel256.ratioToNode': (v) => v <= 1.15,
  'parallel256.lost': (v) => v === 0,
  'parallel256.duplicated': (v) => v === 0,
  'parallel256.timeouts': (v) => v === 0,
  'enqueueStall.maxMs': (v) => v <= 50,
  'queueGrowth.ratio1000to1': (v) => v <= 1.1,
  'queueGrowth.ratioBigQueue': (v) => v <= 1.2,
  'proxy.rtt.p50RatioToPipe': (v) => v <= 1.1,
  'server.json.p50RatioToBare': (v) => v <= 1.2,
  'server.sse.ratioToBare': (v) => v <= 1.2,
  'server.concurrent1000.claimed': (v) => v === 600,
  'server.concurrent1000.duplicated': (v) => v === 0,
  'server.concurrent1000.errors': (v) => v === 0,
  'server.concurrent1000.ratioToBare': (v) => v >= 0.8,
  'server.playbook.ratioToEnqueue': (v) => v <= 1.1,
  'server.playbook.errors': (v) => v === 0,
  'proxy.rtt.inProcessP50RatioToSocat': (v) => v <= 1.0,
  'proxy.stalledReader.growthMiB': (v) => v <= 64,
  'packInstall.online.ms': (v) => v < 5000,
  'packInstall.offline.ms': (v) => v < 5000,
  'pty.node.ratioToPipe': (v) => v <= 1.5,
  'pty.sh.ratioToPipe': (v) => v <= 1.5,
  'sanitizer.perTestMs': (v) => v <= 2,
};
for (const size of ['16B', '64B', '1KiB', '4KiB', '64KiB', '1MiB']) {
  targets[`proxy.throughput.${size}.ratioToPipe`] =
    size === '16B' ? (v) => v >= 0.85 : (v) => v >= 0.9;
}
for (const size of ['16B', '1KiB', '64KiB', '1MiB']) {
  targets[`proxy.throughput.${size}.ratioToSocat`] = (v) => v >= 1.0;
}
for (const size of ['1KiB', '64KiB']) targets[`proxy.stdio.${size}.ratioToPipe`] = (v) => v >= 0.9;
for (const size of ['64B', '1KiB']) {
  targets[`proxy.lines.${size}.ratioToSocat`] = (v) => v >= 1.0;
  targets[`proxy.lines.${size}.ratioToPipe`] = (v) => v >= 0.9;
}
const targetText = {
  'mockCall.ratioToNode': '≤ 1.10',
  'routing.ratio1000to1': '≤ 1.10',
  'routing.staticRatioToNode': '≤ 0.10',
  'routing.sh.ratio100to1': '≤ 1.50',
  'parallel64.routed.speedup': '≥ 8',
  'parallel64.routed.lost': '= 0',
  'parallel64.routed.duplicated': '= 0',
  'parallel64.routed.timeouts': '= 0',
  'parallel256.routed.lost': '= 0',
  'parallel256.routed.duplicated': '= 0',
  'parallel256.routed.timeouts': '= 0',
  'handler.ratioToQueue': '≤ 1.10',
  'mockCall.staticRatioToNode': '≤ 0.10',
  'mockCall.handedOverRatioToRunner': '≤ 1.05',
  'parallel64.ratioToNode': '≤ 1.10',
  'parallel64.static.speedup': '≥ 10',
  'parallel64.static.lost': '= 0',
  'parallel64.static.duplicated': '= 0',
  'parallel64.static.timeouts': '= 0',
  'parallel256.static.lost': '= 0',
  'parallel256.static.duplicated': '= 0',
  'parallel256.static.timeouts': '= 0',
  'parallel64.lost': '= 0',
  'parallel64.duplicated': '= 0',
  'parallel64.timeouts': '= 0',
  'parallel256.ratioToNode': '≤ 1.15',
  'parallel256.lost': '= 0',
  'parallel256.duplicated': '= 0',
  'parallel256.timeouts': '= 0',
  'enqueueStall.maxMs': '≤ 50',
  'queueGrowth.ratio1000to1': '≤ 1.10',
  'queueGrowth.ratioBigQueue': '≤ 1.20',
  'proxy.rtt.p50RatioToPipe': '≤ 1.10',
  'proxy.rtt.inProcessP50RatioToSocat': '≤ 1.0',
  'proxy.stalledReader.growthMiB': '≤ 64',
  'server.json.p50RatioToBare': '≤ 1.20',
  'server.sse.ratioToBare': '≤ 1.20',
  'server.concurrent1000.claimed': '= 600',
  'server.concurrent1000.duplicated': '= 0',
  'server.concurrent1000.errors': '= 0',
  'server.concurrent1000.ratioToBare': '≥ 0.8',
  'server.playbook.ratioToEnqueue': '≤ 1.10',
  'server.playbook.errors': '= 0',
  'packInstall.online.ms': '< 5000',
  'packInstall.offline.ms': '< 5000',
  'pty.node.ratioToPipe': '≤ 1.5',
  'pty.sh.ratioToPipe': '≤ 1.5',
  'sanitizer.perTestMs': '≤ 2',
};
for (const size of ['16B', '64B', '1KiB', '4KiB', '64KiB', '1MiB']) {
  targetText[`proxy.throughput.${size}.ratioToPipe`] = size === '16B' ? '≥ 0.85' : '≥ 0.9';
}
for (const size of ['16B', '1KiB', '64KiB', '1MiB']) {
  targetText[`proxy.throughput.${size}.ratioToSocat`] = '≥ 1.0';
}
for (const size of ['1KiB', '64KiB']) targetText[`proxy.stdio.${size}.ratioToPipe`] = '≥ 0.9';
for (const size of ['64B', '1KiB']) {
  targetText[`proxy.lines.${size}.ratioToSocat`] = '≥ 1.0';
  targetText[`proxy.lines.${size}.ratioToPipe`] = '≥ 0.9';
}

// `node bench/run.mjs [--rounds N] [--iterations N] [--json FILE] [suite…]`:
// `--rounds` sets the rounds of every suite that has them (bench:compare takes
// one per run, and runs it many times), `--iterations` the paired calls of
// those that count calls instead; `--json` writes this run's figures to FILE
// alone, leaving bench/results.json and the table out.
const args = process.argv.slice(2);
const flag = (name) => {
  const at = args.indexOf(name);
  if (at === -1) return undefined;
  const value = args[at + 1];
  if (value === undefined || value.startsWith('--')) {
    console.error(`bench: ${name} needs a value`);
    process.exit(2);
  }
  args.splice(at, 2);
  return value;
};
const count = (name) => {
  const text = flag(name);
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!(Number.isInteger(value) && value > 0)) {
    console.error(`bench: ${name} takes a whole number above 0, got ${text}`);
    process.exit(2);
  }
  return value;
};
const rounds = count('--rounds');
const iterations = count('--iterations');
const jsonOut = flag('--json');
const suiteOptions =
  rounds === undefined && iterations === undefined
    ? undefined
    : {
        ...(rounds === undefined ? {} : { rounds }),
        ...(iterations === undefined ? {} : { iterations }),
      };
const only = args;
// Ratios are paired within one run, but a busy machine still adds noise: record how busy it was.
const loadAtStart = loadavg()[0];
// The serial mock suites run first, before the parallel ones leave the machine
// busy; queueGrowth writes 500 MB, so it runs after the parallel suites, and
// every suite ends with `sync` so its writeback does not slow the next one.
// Loaded when chosen: a suite imports what it measures from 'shimkit', and
// bench:compare runs this file against older builds that may lack another's.
const from = (file, name) => async (options) => (await import(file))[name](options);
const suites = {
  mockCall: from('./mock-binary.mjs', 'mockCall'),
  routing: from('./mock-binary.mjs', 'routing'),
  handler: from('./mock-binary.mjs', 'handler'),
  spy: from('./mock-binary.mjs', 'spy'),
  parallel64: from('./mock-binary.mjs', 'parallel64'),
  parallel256: from('./mock-binary.mjs', 'parallel256'),
  enqueueStall: from('./mock-binary.mjs', 'enqueueStall'),
  queueGrowth: from('./mock-binary.mjs', 'queueGrowth'),
  cli: from('./cli.mjs', 'cli'),
  'process.output': from('./process.mjs', 'processOutput'),
  'process.run': from('./process.mjs', 'processRun'),
  pty: from('./pty.mjs', 'pty'),
  'proxy.throughput': from('./proxy.mjs', 'proxyThroughput'),
  'proxy.lines': from('./proxy.mjs', 'proxyLines'),
  'proxy.stdio': from('./proxy.mjs', 'proxyStdioBench'),
  'proxy.rtt': from('./proxy.mjs', 'proxyRtt'),
  'proxy.stalledReader': from('./proxy.mjs', 'proxyStalledReader'),
  'server.json': from('./server.mjs', 'serverJson'),
  'server.sse': from('./server.mjs', 'serverSse'),
  'server.concurrent1000': from('./server.mjs', 'serverConcurrent'),
  'server.eventGapErrorMs': from('./server.mjs', 'serverEventGap'),
  'server.playbook': from('./server.mjs', 'serverPlaybook'),
  packInstall: from('./pack.mjs', 'packInstall'),
  sanitizer: from('./sanitizer.mjs', 'sanitizer'),
};
// A name may go one step into a suite that has parts (`proxy.throughput.1KiB`): that part alone.
const parts = (name) =>
  only.filter((o) => o.startsWith(`${name}.`)).map((o) => o.slice(name.length + 1));
const chosen = (name) =>
  only.length === 0 ||
  only.some((o) => name === o || name.startsWith(`${o}.`) || o.startsWith(`${name}.`));
const unknown = only.filter(
  (o) =>
    !Object.keys(suites).some(
      (name) => name === o || name.startsWith(`${o}.`) || o.startsWith(`${name}.`),
    ),
);
if (unknown.length > 0) {
  console.error(
    `bench: no suite named ${unknown.join(', ')}; the suites are ${Object.keys(suites).join(', ')}`,
  );
  process.exit(2);
}
const results =
  jsonOut === undefined && existsSync(RESULTS) ? JSON.parse(readFileSync(RESULTS, 'utf8')) : {};
for (const [name, run] of Object.entries(suites)) {
  if (!chosen(name)) continue;
  process.stderr.write(`bench: ${name}…\n`);
  const whole = only.length === 0 || only.some((o) => name === o || name.startsWith(`${o}.`));
  const options = whole ? suiteOptions : { ...suiteOptions, only: parts(name) };
  const [head, tail] = name.split('.');
  if (tail) {
    results[head] ??= {};
    results[head][tail] = await run(options);
  } else {
    results[name] = await run(options);
  }
  spawnSync('sync');
}
if (jsonOut !== undefined) {
  writeFileSync(jsonOut, `${JSON.stringify(results)}\n`);
  process.exit(0);
}
results.environment = {
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
  cpus: cpus().length,
  loadAverageAtStart: Number(loadAtStart.toFixed(2)),
  strippedEnv,
  date: new Date().toISOString(),
};
writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);

const rows = [];
const flatten = (prefix, value) => {
  if (typeof value === 'object' && value !== null) {
    for (const [key, inner] of Object.entries(value)) flatten(`${prefix}.${key}`, inner);
    return;
  }
  const check = targets[prefix];
  rows.push([
    prefix,
    String(value),
    targetText[prefix] ?? '',
    check ? (check(value) ? 'ok' : 'MISSED') : '',
  ]);
};
for (const [suite, figures] of Object.entries(results))
  if (suite !== 'environment') flatten(suite, figures);
const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i].length), 6));
const line = (r) =>
  r
    .map((c, i) => c.padEnd(widths[i]))
    .join('  ')
    .trimEnd();
console.log(line(['figure', 'value', 'target', '']));
for (const r of rows) console.log(line(r));
console.log(`\n${JSON.stringify(results.environment)}\nwritten to bench/results.json`);

// PERF-04 / PERF-05: the frame proxy against a direct connection, a plain
// `a.pipe(b)` relay and socat (what users would run instead), client, middle
// and server each in its own process, over Unix sockets. Ratios are taken per
// round (alternating order) and the median kept.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, round } from './lib.mjs';

const MiB = 1024 * 1024;
const peer = (name) => fileURLToPath(new URL(`./peers/${name}.mjs`, import.meta.url));

function start(name, args) {
  const child = spawn(process.execPath, [peer(name), ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = [];
  const waiters = [];
  let rest = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (text) => {
    rest += text;
    let at = rest.indexOf('\n');
    while (at !== -1) {
      lines.push(rest.slice(0, at));
      rest = rest.slice(at + 1);
      at = rest.indexOf('\n');
      waiters.shift()?.();
    }
  });
  const exited = new Promise((resolve) => child.on('close', resolve));
  return {
    pid: child.pid,
    async line() {
      while (lines.length === 0) await new Promise((r) => waiters.push(r));
      return lines.shift();
    },
    exited,
    async stop() {
      child.stdin.end();
      await exited;
    },
  };
}

const socatThere = () => spawnSync('socat', ['-V'], { stdio: 'ignore' }).status === 0;

/**
 * socat, the relay PERF-08 compares with: installed here when missing and
 * this is root on a Debian-like machine (`apt-get install -y socat`, after an
 * `apt-get update` if the first try fails), as .ci/run does with its tools.
 */
function installSocat() {
  if (socatThere()) return true;
  if (process.getuid?.() !== 0 || spawnSync('sh', ['-c', 'command -v apt-get']).status !== 0) {
    return false;
  }
  process.stderr.write('  socat is missing: apt-get install -y socat…\n');
  const install = () =>
    spawnSync('apt-get', ['install', '-y', '-qq', 'socat'], { stdio: 'ignore' }).status === 0;
  if (!install()) {
    spawnSync('apt-get', ['update', '-qq'], { stdio: 'ignore' });
    install();
  }
  return socatThere();
}

/** Whether socat is there (installed if it can be); without it the ÷ socat columns are left out. */
export const hasSocat = installSocat();

/** socat as the relay users would reach for, in its own process group; ready once it listens. */
async function startSocat(listen, upstream) {
  const child = spawn(
    'socat',
    ['-b', '65536', `UNIX-LISTEN:${listen},fork`, `UNIX-CONNECT:${upstream}`],
    { stdio: ['ignore', 'ignore', 'inherit'], detached: true },
  );
  const exited = new Promise((resolve) => child.on('close', resolve));
  const deadline = Date.now() + 5000;
  while (!existsSync(listen)) {
    if (Date.now() > deadline) throw new Error('bench: socat did not listen within 5 s');
    await new Promise((r) => setTimeout(r, 5)); // polling for a file socat makes: no event to wait on
  }
  return {
    pid: child.pid,
    async stop() {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {}
      await exited;
    },
  };
}

/**
 * A server, and in front of it nothing ('direct'), a pipe relay, socat, or the
 * proxy (with `framing`); returns where clients go.
 */
async function topology(kind, serverMode, framing = 'u32be') {
  const dir = mkdtempSync(join(tmpdir(), 'shimkit-bench-'));
  const serverPath = join(dir, 's.sock');
  const server = start('sink', [serverPath, serverMode]);
  await server.line();
  let middle;
  let target = serverPath;
  if (kind === 'socat') {
    target = join(dir, 'm.sock');
    middle = await startSocat(target, serverPath);
  } else if (kind !== 'direct') {
    target = join(dir, 'm.sock');
    middle = start(kind === 'pipe' ? 'relay' : 'proxy', [target, serverPath, framing]);
    await middle.line();
  }
  return {
    server,
    middle,
    target,
    async close() {
      await middle?.stop();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function throughputOnce(kind, size, total, framing) {
  const t = await topology(kind, 'count', framing);
  const source = start('source', [t.target, String(size), String(total), framing]);
  const { bytes, ms } = JSON.parse(await t.server.line());
  await source.exited;
  await t.close();
  return bytes / MiB / (ms / 1000);
}

// At least 256 MiB each: shorter streams (96 MiB at 16 B took ~0.2 s) measured warm-up more than
// throughput, and every relay the same way (pipe 500–575 MiB/s at 96 MiB, 700–800 at 256 MiB here).
const SIZES = [
  ['16B', 16, 256 * MiB],
  ['64B', 64, 256 * MiB],
  ['1KiB', 1024, 256 * MiB],
  ['4KiB', 4096, 256 * MiB],
  ['64KiB', 64 * 1024, 512 * MiB],
  ['1MiB', MiB, 512 * MiB],
];

/** Lines of 64 B and 1 KiB (newline included) through the proxy with `framing: 'lines'`. */
const LINE_SIZES = [
  ['64B', 64, 256 * MiB],
  ['1KiB', 1024, 256 * MiB],
];

async function throughputTable(sizes, framing, rounds, only) {
  const kinds = ['direct', 'pipe', ...(hasSocat ? ['socat'] : []), 'proxy'];
  const out = {};
  const unknown = (only ?? []).filter((o) => !sizes.some(([label]) => label === o));
  if (unknown.length > 0) {
    throw new Error(
      `bench: no size ${unknown.join(', ')}; the sizes are ${sizes.map(([l]) => l).join(', ')}`,
    );
  }
  for (const [label, size, total] of sizes) {
    if (only?.length && !only.includes(label)) continue;
    const speeds = Object.fromEntries(kinds.map((k) => [k, []]));
    const toPipe = [];
    const toDirect = [];
    const toSocat = [];
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? kinds : [...kinds].reverse();
      const got = {};
      for (const kind of order) got[kind] = await throughputOnce(kind, size, total, framing);
      for (const kind of order) speeds[kind].push(got[kind]);
      toPipe.push(got.proxy / got.pipe);
      toDirect.push(got.proxy / got.direct);
      if (hasSocat) toSocat.push(got.proxy / got.socat);
    }
    out[label] = {
      proxyMiBps: round(median(speeds.proxy), 1),
      pipeMiBps: round(median(speeds.pipe), 1),
      ...(hasSocat ? { socatMiBps: round(median(speeds.socat), 1) } : {}),
      directMiBps: round(median(speeds.direct), 1),
      ratioToPipe: round(median(toPipe)),
      ...(hasSocat ? { ratioToSocat: round(median(toSocat)) } : {}),
      ratioToDirect: round(median(toDirect)),
    };
    process.stderr.write(`  ${framing} ${label}: ${JSON.stringify(out[label])}\n`);
  }
  return out;
}

export async function proxyThroughput({ rounds = 5, only } = {}) {
  if (!hasSocat) {
    process.stderr.write(
      '  socat is not installed and could not be (not root, or no apt-get), so the ÷ socat rows (PERF-08) are left out: install it (Debian/Ubuntu: apt-get install -y socat) and run again\n',
    );
  }
  return throughputTable(SIZES, 'u32be', rounds, only);
}

export async function proxyLines({ rounds = 5, only } = {}) {
  return throughputTable(LINE_SIZES, 'lines', rounds, only);
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export async function proxyRtt({ rounds = 3, count = 2000 } = {}) {
  const kinds = ['direct', 'pipe', ...(hasSocat ? ['socat'] : []), 'proxy', 'inProcess'];
  const rtts = Object.fromEntries(kinds.map((k) => [k, []]));
  for (let r = 0; r < rounds; r++) {
    for (const kind of r % 2 === 0 ? kinds : [...kinds].reverse()) {
      // inProcess: the proxy runs inside the client's process, as in a test that hosts it.
      const t = await topology(kind === 'inProcess' ? 'direct' : kind, 'echo');
      const args =
        kind === 'inProcess'
          ? [`${t.target}.p`, String(count), t.target]
          : [t.target, String(count)];
      const client = start('pingpong', args);
      const samples = JSON.parse(await client.line());
      rtts[kind].push(...samples.slice(Math.floor(count / 10))); // drop the warm-up tenth
      await client.exited;
      await t.close();
    }
  }
  const p = (kind, q) => percentile(rtts[kind], q);
  return {
    directP50Ms: round(p('direct', 50), 4),
    pipeP50Ms: round(p('pipe', 50), 4),
    proxyP50Ms: round(p('proxy', 50), 4),
    directP99Ms: round(p('direct', 99), 4),
    pipeP99Ms: round(p('pipe', 99), 4),
    proxyP99Ms: round(p('proxy', 99), 4),
    p50RatioToDirect: round(p('proxy', 50) / p('direct', 50)),
    p99RatioToDirect: round(p('proxy', 99) / p('direct', 99)),
    // Any relay process adds a hop each way; this is what the proxy adds over the cheapest one.
    p50RatioToPipe: round(p('proxy', 50) / p('pipe', 50)),
    p99RatioToPipe: round(p('proxy', 99) / p('pipe', 99)),
    ...(hasSocat
      ? {
          socatP50Ms: round(p('socat', 50), 4),
          socatP99Ms: round(p('socat', 99), 4),
          p50RatioToSocat: round(p('proxy', 50) / p('socat', 50)),
          // The proxy hosted in the test's process (as tests run it) against socat in a process of its own.
          inProcessP50RatioToSocat: round(p('inProcess', 50) / p('socat', 50)),
        }
      : {}),
    inProcessP50Ms: round(p('inProcess', 50), 4),
    inProcessP50RatioToDirect: round(p('inProcess', 50) / p('direct', 50)),
    inProcessP99RatioToDirect: round(p('inProcess', 99) / p('direct', 99)),
  };
}

function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)[1]) / 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** PERF-05: the proxy's memory while a client streams 1 GiB at a server that never reads. */
export async function proxyStalledReader({ seconds = 3 } = {}) {
  const t = await topology('proxy', 'stall');
  const idle = memoryOf(t.middle.pid).rss;
  const source = start('source', [t.target, String(64 * 1024), String(1024 * MiB)]);
  await new Promise((r) => setTimeout(r, seconds * 1000)); // a benchmark may wait: it measures what a stall costs
  const { peak } = memoryOf(t.middle.pid);
  await t.close();
  await source.exited;
  return {
    idleRssMiB: round(idle, 1),
    peakRssMiB: round(peak, 1),
    growthMiB: round(peak - idle, 1),
  };
}

/**
 * The stdio transport: 256 MiB of frames written into `cat` and read back,
 * through `proxyStdio('cat')` and through a plain `spawn('cat')` whose stdin
 * and stdout the bench pipes itself (what a test would do without shimkit).
 */
async function stdioOnce(kind, size, total) {
  const { proxyStdio } = await import('shimkit');
  const frame = Buffer.alloc(4 + size, 0x5a);
  frame.writeUInt32BE(size, 0);
  const batch = Buffer.concat(
    Array.from({ length: Math.max(1, Math.floor((64 * 1024) / frame.length)) }, () => frame),
  );
  const batches = Math.max(1, Math.round(total / batch.length));
  let stdin;
  let stdout;
  let close;
  if (kind === 'proxy') {
    const p = (await proxyStdio('cat', [], { stderr: 'ignore' })).ref(); // the bench awaits its own promise
    ({ stdin, stdout } = p);
    close = () => p.close();
  } else {
    const child = spawn('cat', [], { stdio: ['pipe', 'pipe', 'ignore'] });
    ({ stdin, stdout } = child);
    close = () => new Promise((r) => child.once('close', r));
  }
  const expected = batches * batch.length;
  let got = 0;
  let first = 0;
  const done = new Promise((resolve) => {
    stdout.on('data', (chunk) => {
      if (got === 0) first = performance.now();
      got += chunk.length;
      if (got >= expected) resolve(performance.now());
    });
  });
  for (let i = 0; i < batches; i++) {
    if (!stdin.write(batch)) await new Promise((r) => stdin.once('drain', r));
  }
  stdin.end();
  const end = await done;
  await close();
  return got / MiB / ((end - first) / 1000);
}

export async function proxyStdioBench({ rounds = 5 } = {}) {
  const out = {};
  for (const [label, size] of [
    ['1KiB', 1024],
    ['64KiB', 64 * 1024],
  ]) {
    const speeds = { pipe: [], proxy: [] };
    const ratios = [];
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? ['pipe', 'proxy'] : ['proxy', 'pipe'];
      const got = {};
      for (const kind of order) got[kind] = await stdioOnce(kind, size, 256 * MiB);
      for (const kind of order) speeds[kind].push(got[kind]);
      ratios.push(got.proxy / got.pipe);
    }
    out[label] = {
      proxyMiBps: round(median(speeds.proxy), 1),
      pipeMiBps: round(median(speeds.pipe), 1),
      ratioToPipe: round(median(ratios)),
    };
    process.stderr.write(`  stdio ${label}: ${JSON.stringify(out[label])}\n`);
  }
  return out;
}

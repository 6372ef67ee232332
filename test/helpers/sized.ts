// Checks the fast suite runs small and the stress suite (*.stress.test.ts)
// runs big: the same body, sized by its arguments, so neither copy drifts.
import { readdirSync, statSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { expect, onTestFinished } from 'vitest';
import { createMockBinary, MockExitCode, spawnProcess } from '../../src/index.js';
import { liveGeneration } from '../../src/queue/reader.js';
import { completion, oneLine, runCommand, spawnTracked, testDir } from './index.js';
import { Lines } from './lines.js';
import { memoryOf, stalled } from './memory.js';
import { seededRandom } from './parallel.js';
import { generationDir } from './protocol.js';
import { rig } from './proxy.js';

const PROXY = fileURLToPath(new URL('../fixtures/proxy-process.mjs', import.meta.url));
const MiB = 1024 * 1024;

/**
 * MB-20: eleven responses of `mib` MiB each stay out of the queue file (it
 * stays under 4 KiB), and a call reads and prints only its own.
 */
export async function expectBigResponsesOutsideTheQueue(mib: number): Promise<void> {
  await using git = createMockBinary('git', { tmpDir: testDir() });
  const big = 'y'.repeat(mib * 1024 * 1024);
  git.enqueue({ stdout: 'small\n' });
  for (let i = 0; i < 11; i++) git.enqueue({ stdout: big, stderr: `#${i}\n` });
  expect(git.queuedCount()).toBe(12);
  const queue = join(generationDir(git), 'queue.jsonl');
  expect(statSync(queue).size).toBeLessThan(4096);

  const small = await runCommand(git.path);
  expect(small.stdout.toString()).toBe('small\n');
  const child = spawnTracked(git.path, []);
  const r = await completion(child);
  expect(r.code).toBe(0);
  expect(r.stdout.length).toBe(big.length);
  expect(r.stdout.equals(Buffer.from(big))).toBe(true);
  expect(r.stderr.toString()).toBe('#0\n');
  expect(() => git.assertDone()).toThrow(
    `2 of 12 responses used; never used: #3 {stdout:[${big.length} bytes]`,
  );
}

/**
 * MB-20: `callers` parallel calls while the test resets the mock eight times
 * over and then disposes it with a third still running: each call succeeds or
 * fails with the one-line "state file is missing" diagnostic, nothing else.
 */
export async function expectCallersSurviveResetAndDispose(callers: number): Promise<void> {
  const git = createMockBinary('git', {
    responses: Array.from({ length: callers + 31 }, (_, i) => ({ stdout: `r${i}\n` })),
  });
  const children = Array.from({ length: callers }, (_, k) => spawnTracked(git.path, [`c${k}`]));
  const exits = children.map(completion);
  // Reset whenever another eighth of the callers is done, then dispose with a third still running.
  const step = Math.max(1, Math.floor(callers / 8));
  for (let i = 0; i < 5; i++) {
    await exits[i * step];
    git.reset();
    git.enqueue(Array.from({ length: 20 }, (_, k) => ({ stdout: `g${i}-${k}\n` })));
  }
  await exits[Math.floor((callers * 2) / 3)];
  await git.dispose();
  const results = await Promise.all(exits);
  for (const r of results) {
    if (r.code === 0) continue;
    expect(r.code, r.stderr.toString()).toBe(MockExitCode.broken);
    expect(oneLine(r.stderr)).toMatch(
      /^shimkit: a state file is missing \(was the mock disposed or reset while this call ran\?\): \//,
    );
  }
}

/** MB-20: dispose() right after half of `callers` parallel calls were SIGKILLed leaves nothing. */
export async function expectDisposeAfterKillsLeavesNothing(callers: number): Promise<void> {
  const parent = testDir();
  const git = createMockBinary('git', {
    tmpDir: parent,
    responses: Array.from({ length: callers }, (_, i) => ({ stdout: `r${i}\n`, delayMs: i % 3 })),
  });
  const children = Array.from({ length: callers }, (_, k) => spawnTracked(git.path, [`c${k}`]));
  const exits = Promise.all(children.map(completion));
  await git.waitForCalls(Math.ceil(callers / 8), { until: 'started', timeoutMs: 20_000 });
  for (const child of children.filter((_, k) => k % 2 === 0)) child.kill('SIGKILL');
  await git.dispose(); // while the killed ones die and the others still write
  await exits;
  expect(readdirSync(parent)).toEqual([]);
}

/**
 * MB-13: `4 * perShape` parallel calls in 4 argv shapes, in random order, on
 * interleaved responses (a call must skip the others' to find its own): each
 * gets one of its own, exactly once.
 */
export async function expectRoutedShapesExactlyOnce(perShape: number): Promise<void> {
  const shapes = [['push'], ['pull', '--rebase'], ['fetch', 'origin'], ['log', '-1']];
  const responses = Array.from({ length: perShape * shapes.length }, (_, i) => {
    const shape = shapes[i % shapes.length] as string[];
    return { match: { args: shape }, stdout: `${shape[0]} ${Math.floor(i / shapes.length)}\n` };
  });
  await using git = createMockBinary('git', { onExhausted: 'fail', responses });
  const env = git.env();
  const order = fc.sample(
    fc.shuffledSubarray(
      Array.from({ length: responses.length }, (_, i) => i),
      { minLength: responses.length, maxLength: responses.length },
    ),
    1,
  )[0] as number[];
  const results = await Promise.all(
    order.map((i) => runCommand('git', shapes[i % shapes.length] as string[], { env })),
  );
  expect(results.every((r) => r.code === 0)).toBe(true);
  for (const shape of shapes) {
    const outs = results
      .map((r) => r.stdout.toString())
      .filter((o) => o.startsWith(shape[0] as string));
    expect(outs.sort()).toEqual(
      Array.from({ length: perShape }, (_, k) => `${shape[0]} ${k}\n`).sort(),
    );
  }
  const used = git.calls().map((c) => c.response);
  expect(new Set(used).size).toBe(responses.length); // no response twice
  git.assertDone();
}

/**
 * MB-13: two responses with `times: callers / 4` answer at most that many of
 * `callers` parallel calls, a fifth of them SIGKILLed mid-call; claim markers agree.
 */
export async function expectTimesBoundUnderKills(callers: number): Promise<void> {
  const times = callers / 4;
  await using git = createMockBinary('git', {
    onExhausted: 'fail',
    responses: [
      { match: { argsPrefix: ['a'] }, stdout: 'a\n', times, delayMs: 50 },
      { match: { argsPrefix: ['b'] }, stdout: 'b\n', times, delayMs: 50 },
    ],
  });
  const env = git.env();
  const children = Array.from({ length: callers }, (_, i) =>
    spawnTracked('git', [i % 2 === 0 ? 'a' : 'b', String(i)], { env }),
  );
  const done = children.map(completion);
  children.forEach((child, i) => {
    if (i % 5 === 0) setTimeout(() => child.kill('SIGKILL'), 10 + i);
  });
  const exits = await Promise.all(done);
  const served = exits.filter((e) => e.code === 0).map((e) => e.stdout.toString());
  expect(served.filter((s) => s === 'a\n').length).toBeLessThanOrEqual(times);
  expect(served.filter((s) => s === 'b\n').length).toBeLessThanOrEqual(times);
  const claims = readdirSync(join(liveGeneration(git.stateDir), 'claims'));
  expect(claims.filter((n) => /^1(-|$)/.test(n)).length).toBeLessThanOrEqual(times);
  expect(claims.filter((n) => /^2(-|$)/.test(n)).length).toBeLessThanOrEqual(times);
  // A call that got nothing says so; one killed mid-call is recorded as killed.
  for (const call of git.calls()) {
    expect(['exited', 'unmatched', 'killed']).toContain(call.status);
    if (call.status === 'exited') expect(call.response).toBe(call.argv[0] === 'a' ? 1 : 2);
  }
}

/** SP-05: a child writes `mib` MiB to stdout: the tail keeps the last 64 KiB, counts the rest, and the test process's memory stays flat. */
export async function expectFlatMemoryUnderOutput(mib: number): Promise<void> {
  const bytes = mib * 1024 * 1024;
  const before = memoryOf(process.pid).rss / 2 ** 20;
  let peak = before;
  const p = spawnProcess('head', ['-c', String(bytes), '/dev/zero']);
  const sampler = setInterval(() => {
    peak = Math.max(peak, memoryOf(process.pid).rss / 2 ** 20);
  }, 20);
  onTestFinished(() => clearInterval(sampler));
  onTestFinished(async () => {
    await p.close({ graceMs: 0 });
  });
  const exit = await p.wait({ timeoutMs: 120_000 });
  clearInterval(sampler);

  expect(exit).toMatchObject({ timedOut: false, exitCode: 0 });
  expect(p.stdout.totalBytes).toBe(bytes);
  expect(p.stdout.droppedBytes).toBe(bytes - 64 * 1024);
  expect(p.stdout.bytes()).toEqual(Buffer.alloc(64 * 1024));
  expect(peak - before).toBeLessThan(64);
}

/**
 * PX-06: a client streams `mib` MiB of 64 KiB frames through a proxy (its own
 * process) to a reader that stalls: the client is held back, the proxy's
 * memory stays within 64 MiB of idle, and once the reader wakes every byte arrives.
 */
export async function expectProxyHoldsBackAStalledReader(mib: number): Promise<void> {
  const dir = testDir();
  const upstreamPath = join(dir, 'server.sock');
  let serverSide: Socket | undefined;
  const accepted = new Promise<Socket>((resolve) => {
    const server = createServer({ allowHalfOpen: true }, (socket) => {
      socket.pause(); // the reader stalls: nothing is read until the test says so
      serverSide = socket;
      resolve(socket);
    });
    server.listen(upstreamPath);
    onTestFinished(() => {
      serverSide?.destroy();
      server.close();
    });
  });
  const proxyProcess = spawnTracked(process.execPath, [
    PROXY,
    JSON.stringify({ listen: join(dir, 'proxy.sock'), upstream: upstreamPath }),
  ]);
  const out = new Lines(proxyProcess);
  const { address, pid } = JSON.parse(await out.next());
  const idle = memoryOf(pid).rss;

  const client = connect({ path: address });
  onTestFinished(() => {
    client.destroy();
  });
  await new Promise((r) => client.once('connect', r));
  const server = await accepted;

  const body = 64 * 1024;
  const frame = Buffer.alloc(4 + body, 7);
  frame.writeUInt32BE(body, 0);
  const count = (mib * MiB) / body; // mib MiB of bodies
  let blockedWrites = 0;
  const streaming = (async () => {
    for (let i = 0; i < count; i++) {
      if (!client.write(frame)) {
        blockedWrites += 1;
        await new Promise((r) => client.once('drain', r));
      }
    }
    client.end();
  })();

  const stuckAt = await stalled(() => client.bytesWritten);
  const during = memoryOf(pid);
  // The client could not push the gigabyte: it is waiting for 'drain'.
  expect(stuckAt).toBeLessThan(64 * MiB);
  expect(blockedWrites).toBeGreaterThan(0);
  expect(during.peak - idle).toBeLessThan(64 * MiB);

  // The reader wakes up: every byte arrives, and memory stayed bounded throughout.
  let received = 0;
  server.on('data', (chunk: Buffer) => {
    received += chunk.length;
  });
  server.resume();
  await new Promise((r) => server.once('end', r));
  await streaming;
  expect(received).toBe(count * frame.length);
  const after = memoryOf(pid);
  expect(after.peak - idle).toBeLessThan(64 * MiB);
  proxyProcess.stdin?.end();
  const stats = JSON.parse(await out.next());
  expect(stats.c2s).toEqual({ frames: count, bytes: count * frame.length });
}

/** Frame i of a seeded stream: sizes from 0 B to 1 MiB (log-uniform, some empty), content unique per frame. */
function streamFrame(random: () => number, i: number): Buffer {
  const r = random();
  const size = r < 0.01 ? 0 : Math.min(1024 * 1024, Math.floor(2 ** (random() * 20)));
  const body = size === 0 ? Buffer.alloc(0) : Buffer.alloc(size, `<${i}:${size}>`);
  const header = Buffer.allocUnsafe(4);
  header.writeUInt32BE(size, 0);
  return Buffer.concat([header, body]);
}

/** Write `count` frames with backpressure; resolve with the bytes written. */
async function sendStream(socket: Socket, seed: number, count: number): Promise<number> {
  const random = seededRandom(seed);
  let bytes = 0;
  for (let i = 1; i <= count; i++) {
    const data = streamFrame(random, i);
    bytes += data.length;
    if (!socket.write(data)) await new Promise((r) => socket.once('drain', r));
  }
  return bytes;
}

/** Check frames as they arrive against the same seeded stream; resolve when `count` matched. */
function expectStream(
  socket: Socket,
  seed: number,
  count: number,
): Promise<{ frames: number; bytes: number }> {
  const random = seededRandom(seed);
  let next = 1;
  let expected = streamFrame(random, next);
  let offset = 0;
  let bytes = 0;
  return new Promise((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      let at = 0;
      while (at < chunk.length) {
        if (next > count) return reject(new Error(`extra bytes after frame ${count}`));
        const take = Math.min(expected.length - offset, chunk.length - at);
        if (!chunk.subarray(at, at + take).equals(expected.subarray(offset, offset + take))) {
          return reject(new Error(`frame ${next} differs at byte ${offset}`));
        }
        at += take;
        offset += take;
        bytes += take;
        if (offset === expected.length) {
          next += 1;
          offset = 0;
          if (next > count) return resolve({ frames: count, bytes });
          expected = streamFrame(random, next);
        }
      }
    });
  });
}

/**
 * PX-01 PX-05: `count` seeded frames of 0 B to 1 MiB each way through a proxy
 * at once, with backpressure: byte-identical, in order, and the counters agree.
 */
export async function expectFramesPassThrough(count: number): Promise<void> {
  const { server, proxy, client } = await rig();
  const { socket } = await client();
  const up = (await server.nextConnection()).socket;
  // The collectors on these sockets would buffer everything: take the sockets over.
  socket.removeAllListeners('data');
  up.removeAllListeners('data');
  const [c2sReceived, s2cReceived, c2sSent, s2cSent] = await Promise.all([
    expectStream(up, 1, count),
    expectStream(socket, 2, count),
    sendStream(socket, 1, count),
    sendStream(up, 2, count),
  ]);
  expect(c2sReceived).toEqual({ frames: count, bytes: c2sSent });
  expect(s2cReceived).toEqual({ frames: count, bytes: s2cSent });
  const stats = proxy.stats();
  expect(stats.c2s).toEqual({ frames: count, bytes: c2sSent });
  expect(stats.s2c).toEqual({ frames: count, bytes: s2cSent });
  expect(stats.connections[0]).toMatchObject({ id: 1, c2s: stats.c2s, s2c: stats.s2c });
  expect(stats.faults).toEqual({});
}

import type { ChildProcess } from 'node:child_process';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { encodeFrame } from 'shimkit';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { completion, spawnTracked, testDir } from '../helpers/index.js';
import { CLI, shimkit } from './helpers.js';

/** An echo server on a Unix socket: every frame comes back as it went. */
async function echoServer(path: string): Promise<Server> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    // A severed connection may be reset while the echo still writes to it.
    socket.on('error', () => {});
    socket.pipe(socket);
  });
  await new Promise<void>((done) => server.listen(path, done));
  onTestFinished(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((done) => server.close(() => done()));
  });
  return server;
}

/** `shimkit proxy ARGS` in the background, with its stdout as lines. */
function startProxy(args: readonly string[]): { child: ChildProcess; lines: string[] } {
  const child = spawnTracked(process.execPath, [CLI, 'proxy', ...args]);
  const lines: string[] = [];
  let text = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    const cut = text.lastIndexOf('\n');
    if (cut === -1) return;
    lines.push(...text.slice(0, cut).split('\n'));
    text = text.slice(cut + 1);
  });
  return { child, lines };
}

async function lineMatching(lines: string[], pattern: RegExp): Promise<string> {
  return vi.waitFor(
    () => {
      const line = lines.find((l) => pattern.test(l));
      if (!line) throw new Error(`no line matching ${pattern} yet: ${JSON.stringify(lines)}`);
      return line;
    },
    { timeout: 10_000, interval: 10 },
  );
}

/** Send frames through a client and collect what comes back until `n` frames arrived. */
async function exchange(
  address: string | { host: string; port: number },
  bodies: string[],
  n: number,
) {
  const client =
    typeof address === 'string' ? connect(address) : connect(address.port, address.host);
  client.on('error', () => {}); // a severed connection may be reset
  onTestFinished(() => {
    client.destroy();
  });
  let got = Buffer.alloc(0);
  client.on('data', (chunk: Buffer) => {
    got = Buffer.concat([got, chunk]);
  });
  await new Promise<void>((done) => client.once('connect', done));
  for (const body of bodies) client.write(encodeFrame(body));
  const frames = () => {
    const out: string[] = [];
    for (let at = 0; at + 4 <= got.length; ) {
      const length = got.readUInt32BE(at);
      if (at + 4 + length > got.length) break;
      out.push(got.subarray(at + 4, at + 4 + length).toString());
      at += 4 + length;
    }
    return out;
  };
  await vi.waitFor(() => expect(frames()).toHaveLength(n), { timeout: 10_000, interval: 5 });
  client.end();
  return frames();
}

describe('shimkit proxy', () => {
  it('CLI-02 --drop and --delay with --json: a line when listening, per frame and per fault; SIGINT closes with counters and exit 0', async () => {
    const dir = testDir();
    await echoServer(join(dir, 'server.sock'));
    const { child, lines } = startProxy([
      '--listen',
      join(dir, 'proxy.sock'),
      '--upstream',
      join(dir, 'server.sock'),
      '--drop',
      'c2s:2',
      '--delay',
      's2c:*:20ms',
      '--json',
    ]);
    const done = completion(child);
    const ready = JSON.parse(await lineMatching(lines, /"event":"listening"/));
    expect(ready).toMatchObject({ address: join(dir, 'proxy.sock'), framing: 'u32be' });
    expect(await exchange(ready.address, ['one', 'two', 'three'], 2)).toEqual(['one', 'three']);
    await lineMatching(lines, /"direction":"s2c","frame":2/);
    child.kill('SIGINT');
    const exit = await done;
    expect(exit.stderr.toString()).toBe('');
    expect(exit.code).toBe(0);
    const events = lines.map((l) => JSON.parse(l));
    expect(events.filter((e) => e.event === 'fault')).toEqual([
      { event: 'fault', connection: 1, direction: 'c2s', frame: 2, action: 'drop' },
      { event: 'fault', connection: 1, direction: 's2c', frame: 1, action: 'delay' },
      { event: 'fault', connection: 1, direction: 's2c', frame: 2, action: 'delay' },
    ]);
    // A frame line for each frame forwarded (the dropped one has its fault line).
    expect(
      events.filter((e) => e.event === 'frame' && e.direction === 'c2s').map((e) => e.frame),
    ).toEqual([1, 3]);
    expect(events.at(-1)).toMatchObject({
      event: 'closed',
      c2s: { frames: 2 },
      s2c: { frames: 2 },
      faults: { drop: 1, delay: 2 },
      connections: 1,
    });
  });

  it('CLI-02 text lines over TCP port 0, --sever-after, SIGTERM closes cleanly', async () => {
    const dir = testDir();
    await echoServer(join(dir, 'server.sock'));
    const { child, lines } = startProxy([
      '--listen',
      '127.0.0.1:0',
      '--upstream',
      join(dir, 'server.sock'),
      '--sever-after',
      'c2s:2',
    ]);
    const done = completion(child);
    const ready = await lineMatching(lines, /^listening on /);
    const port = Number(/^listening on 127\.0\.0\.1:(\d+) -> upstream /.exec(ready)?.[1]);
    expect(port).toBeGreaterThan(0);
    const client = connect(port, '127.0.0.1');
    client.on('error', () => {}); // severed
    onTestFinished(() => {
      client.destroy();
    });
    client.write(Buffer.concat([encodeFrame('a'), encodeFrame('b'), encodeFrame('c')]));
    await lineMatching(lines, /^conn 1 c2s frame 2 FAULT sever-after$/);
    expect(lines).toContain('conn 1 open');
    expect(lines).toContain('conn 1 c2s frame 1 (1 byte)');
    child.kill('SIGTERM');
    const exit = await done;
    expect(exit.code).toBe(0);
    expect(lines.at(-1)).toMatch(
      /^closed: c2s \d+ frames \d+ bytes, .*1 connections, faults sever-after=1$/,
    );
  });

  it('CLI-02 bad flags exit 2 with what to write instead; the framing list is the library’s', async () => {
    const dir = testDir();
    const base = ['proxy', '--listen', join(dir, 'p.sock'), '--upstream', join(dir, 's.sock')];
    const err = async (args: string[], code = 2) => {
      const r = await shimkit(args);
      expect(r.code, args.join(' ')).toBe(code);
      return r.stderr.toString();
    };
    expect(await err([...base, '--framing', 'u64be'])).toMatch(/framing.*"u32be"/);
    expect(await err([...base, '--drop', 'up:3'])).toContain('"c2s", "s2c" or "both"');
    expect(await err([...base, '--delay', 'c2s:3'])).toContain('e.g. --delay s2c:*:50ms');
    expect(await err([...base, '--drop', 'c2s:x'])).toContain('frames are N, N-M, N-, * or */K');
    expect(await err([...base, '--dorp', 'c2s:1'])).toContain('Did you mean --drop?');
    expect(await err([...base, '--probability', '2', '--drop', 'c2s'])).toContain('from 0 to 1');
    expect(await err(['proxy', '--listen', join(dir, 'p.sock')])).toContain('missing --upstream');
  });

  it('CLI-02 PX-13 --framing lines --timeline: one timeline line per frame, live, with the fault on it', async () => {
    const dir = testDir();
    await echoServer(join(dir, 'server.sock'));
    const { child, lines } = startProxy([
      '--listen',
      join(dir, 'proxy.sock'),
      '--upstream',
      join(dir, 'server.sock'),
      '--framing',
      'lines',
      '--timeline',
      '--drop',
      's2c:2',
    ]);
    const done = completion(child);
    await lineMatching(lines, /^listening on .*framing lines/);
    const client = connect(join(dir, 'proxy.sock'));
    client.on('error', () => {}); // the proxy ends by SIGINT with replies unread: a reset
    onTestFinished(() => {
      client.destroy();
    });
    client.write('{"id":1,"method":"ping"}\n{"id":2}\n');
    await lineMatching(lines, / s2c #2 {2}conn 1 {2}8 B {2}\{"id":2\} {2}DROPPED$/);
    expect(await lineMatching(lines, / c2s #1 /)).toMatch(
      /^ +\d+\.\d ms {2}c2s #1 {2}conn 1 {2}24 B {2}\{"id":1,"method":"ping"\}$/,
    );
    child.kill('SIGINT');
    expect((await done).code).toBe(0);
    expect(lines.at(-1)).toMatch(/faults drop=1$/);
  });

  it('CLI-02 PX-16 --bandwidth, --slice, --per-connection and sever-after rst are checked and passed on', async () => {
    const dir = testDir();
    const base = ['proxy', '--listen', join(dir, 'p.sock'), '--upstream', join(dir, 's.sock')];
    const err = async (args: string[]) => {
      const r = await shimkit(args);
      expect(r.code, args.join(' ')).toBe(2);
      return r.stderr.toString();
    };
    expect(await err([...base, '--bandwidth', 'fast'])).toContain(
      'write [DIR:]N in bytes/s, e.g. --bandwidth 65536, --bandwidth s2c:64k.',
    );
    expect(await err([...base, '--slice', 'c2s:1:0'])).toContain('a slice is at least 1 byte');
    expect(await err([...base, '--sever-after', 'c2s:1:hard'])).toContain(
      'the last part is fin or rst',
    );
    expect(await err([...base, '--per-connection', '--drop', 'c2s'])).toContain(
      '--per-connection goes with --probability P.',
    );
    await echoServer(join(dir, 's.sock'));
    const { child, lines } = startProxy([
      ...base.slice(1),
      '--bandwidth',
      's2c:1m',
      '--slice',
      'c2s:1:2',
      '--drop',
      'c2s:2-',
      '--probability',
      '0.5',
      '--per-connection',
      '--json',
    ]);
    const done = completion(child);
    await lineMatching(lines, /"event":"listening"/);
    const ready = JSON.parse(lines.find((l) => l.includes('"listening"')) as string);
    expect(ready.faults).toEqual([
      {
        action: 'slice',
        direction: 'c2s',
        frame: 1,
        sliceBytes: 2,
        probability: 0.5,
        per: 'connection',
      },
      { action: 'drop', direction: 'c2s', frame: { from: 2 }, probability: 0.5, per: 'connection' },
    ]);
    child.kill('SIGINT');
    expect((await done).code).toBe(0);
  });
});

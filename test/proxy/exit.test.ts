// SPEC SP-10: a forgotten proxy never keeps the process alive, and is still
// closed (its socket file removed) when the process exits.
import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { frame, frameServer } from '../helpers/frames.js';
import { completion, type Exit, spawnTracked, testDir } from '../helpers/index.js';

const FORGOTTEN = fileURLToPath(new URL('./fixtures/forgotten-proxy.mjs', import.meta.url));
const NODE_TEST = fileURLToPath(
  new URL('./fixtures/forgotten-proxy.node-test.mjs', import.meta.url),
);

/** Resolve with the child's exit once it ended by itself; fail (it is killed then) after `ms`. */
async function exitsWithin(
  child: ChildProcess,
  ms: number,
  done: Promise<Exit> = completion(child),
): Promise<Exit> {
  await vi.waitFor(
    () => {
      if (child.exitCode === null && child.signalCode === null) {
        throw new Error(`pid ${child.pid} still runs: the forgotten proxy kept it alive`);
      }
    },
    { timeout: ms, interval: 20 },
  );
  return done;
}

/** Each JSON line the child printed. */
function lines(exit: Exit): unknown[] {
  return exit.stdout
    .toString()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

/** Registry dirs (SP-11) a process left in the temp dir. */
function registryOf(pid: number): string[] {
  return readdirSync(tmpdir()).filter((name) => name.startsWith(`shimkit-owner-${pid}-`));
}

describe('a forgotten proxy (SP-10)', () => {
  it('SP-10 a process whose only handle is an unclosed proxy exits by itself, and the socket file is gone', async () => {
    const dir = testDir();
    const child = spawnTracked(process.execPath, [FORGOTTEN, dir, 'idle']);
    child.stdin?.end();
    const exit = await exitsWithin(child, 10_000);
    expect(exit.stderr.toString()).toBe('');
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(lines(exit)).toEqual([{ listening: join(dir, 'proxy.sock'), held: 0 }]);
    expect(existsSync(join(dir, 'proxy.sock'))).toBe(false);
    expect(registryOf(exit.pid)).toEqual([]);
  });

  it('SP-10 a client exchanging frames through the forgotten proxy keeps working while its process awaits the reply', async () => {
    const dir = testDir();
    const server = await frameServer(dir);
    const child = spawnTracked(process.execPath, [FORGOTTEN, dir, 'round-trip']);
    child.stdin?.end();
    const done = completion(child);
    const sent = new Promise<void>((resolve) => {
      child.stdout?.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('"sent"')) resolve();
      });
    });

    // The frame reached the server and the child is waiting for the answer,
    // with nothing but its own client socket holding its event loop open.
    const up = await server.nextConnection();
    await up.frameCount(1);
    await sent;
    expect(child.exitCode).toBeNull();
    up.socket.write(frame('pong'));

    const exit = await exitsWithin(child, 10_000, done);
    expect(exit.stderr.toString()).toBe('');
    expect(exit).toMatchObject({ code: 0, signal: null }); // 13 would be an unsettled await
    expect(lines(exit)).toEqual([
      { listening: join(dir, 'proxy.sock'), held: 0 },
      { sent: 'ping' },
      { reply: 'pong', held: 1 }, // the client's own socket; not the proxy's two
    ]);
    expect(up.texts()).toEqual(['ping']);
    expect(existsSync(join(dir, 'proxy.sock'))).toBe(false);
    // The upstream side the proxy left open was closed when the child exited.
    await up.until((c) => c.ended || c.closed, 'the upstream connection to end');
  });

  it('SP-10 ref() makes a listening proxy hold the event loop, unref() lets go again', async () => {
    const dir = testDir();
    const child = spawnTracked(process.execPath, [FORGOTTEN, dir, 'ref']);
    child.stdin?.end();
    const exit = await exitsWithin(child, 10_000);
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(lines(exit)).toEqual([
      { listening: join(dir, 'proxy.sock'), held: 0 },
      { ref: true, held: 1 },
      { ref: false, held: 0 },
    ]);
    expect(existsSync(join(dir, 'proxy.sock'))).toBe(false);
  });

  it('SP-10 node --test exits when a test forgot its proxy, and the socket file is gone', async () => {
    const dir = testDir();
    const child = spawnTracked(process.execPath, ['--test', NODE_TEST], {
      env: { ...process.env, SHIMKIT_PROXY_DIR: dir, NODE_OPTIONS: '' },
    });
    child.stdin?.end();
    const exit = await exitsWithin(child, 20_000);
    expect(exit.code, exit.stdout.toString() + exit.stderr.toString()).toBe(0);
    expect(exit.stdout.toString()).toMatch(/# pass 1\b/);
    expect(existsSync(join(dir, 'proxy.sock'))).toBe(false);
  });

  it('SP-10 a proxy still open when its process is ended by SIGTERM is closed: the socket file is removed', async () => {
    const dir = testDir();
    const child = spawnTracked(process.execPath, [FORGOTTEN, dir, 'stdin']);
    const done = completion(child);
    await new Promise<void>((resolve) => child.stdout?.once('data', () => resolve()));
    expect(existsSync(join(dir, 'proxy.sock'))).toBe(true);
    child.kill('SIGTERM');
    const exit = await done;
    expect(exit.signal).toBe('SIGTERM');
    expect(existsSync(join(dir, 'proxy.sock'))).toBe(false);
    expect(registryOf(exit.pid)).toEqual([]);
  });
});

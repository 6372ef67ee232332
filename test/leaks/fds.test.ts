import { spawnSync } from 'node:child_process';
import { closeSync, constants, openSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import {
  describeFds,
  type FdReader,
  type FdTable,
  fdDiff,
  fdSnapshot,
  isRuntimeFd,
  type OpenedFd,
} from '../../src/leaks/fds.js';
import { hexAddress } from '../../src/leaks/sockets.js';
import { spawnTracked, testDir } from '../helpers/index.js';

const linux = process.platform === 'linux';

/** The fd table now; the test fails where there is none. */
function snapshot(): FdTable {
  const table = fdSnapshot();
  if (table === undefined) throw new Error('no /proc/self/fd');
  return table;
}

/** Open a file (or device), closed when the test finishes if the test did not. */
function openTracked(path: string | Buffer, flags: number | string): { fd: number; close(): void } {
  const fd = openSync(path, flags);
  let open = true;
  const close = () => {
    if (open) closeSync(fd);
    open = false;
  };
  onTestFinished(close);
  return { fd, close };
}

/** A unix socket server in `dir`, with one client connected and accepted; all closed when the test finishes. */
async function unixPair(
  dir: string,
): Promise<{ path: string; server: Server; client: Socket; accepted: Socket }> {
  const path = join(dir, 's.sock');
  const server = createServer();
  const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
  await new Promise<void>((resolve) => server.listen(path, resolve));
  const client = connect(path);
  onTestFinished(async () => {
    client.destroy();
    (await accepted).destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  await new Promise<void>((resolve) => client.once('connect', resolve));
  return { path, server, client, accepted: await accepted };
}

/** Until the fds opened since `before` are gone (or the deadline). */
async function diffEmpties(before: FdTable): Promise<void> {
  await vi.waitFor(() => expect(fdDiff(before, snapshot())).toEqual([]), {
    timeout: 5000,
    interval: 5,
  });
}

function lineOf(opened: readonly OpenedFd[], fd: number): string {
  const at = opened.findIndex((o) => o.fd === fd);
  return describeFds(opened)[at] ?? '';
}

describe.skipIf(!linux)('leak sanitizer: the fd table diff', () => {
  it('LK-03 a unix server, its client, a FIFO, a file and a PTY master are in the diff with their kind and detail, and gone once closed', async () => {
    const dir = testDir();
    const before = snapshot();
    const { path, server, client, accepted } = await unixPair(dir);
    expect(spawnSync('mkfifo', [join(dir, 'fifo')]).status).toBe(0);
    const fifo = openTracked(join(dir, 'fifo'), constants.O_RDWR | constants.O_NONBLOCK);
    const file = openTracked(join(dir, 'data.txt'), 'w');
    const ptmx = openTracked('/dev/ptmx', constants.O_RDWR | constants.O_NOCTTY);

    const opened = fdDiff(before, snapshot());
    const serverFd = (server as unknown as { _handle: { fd: number } })._handle.fd;
    const clientFd = (client as unknown as { _handle: { fd: number } })._handle.fd;
    const acceptedFd = (accepted as unknown as { _handle: { fd: number } })._handle.fd;
    for (const fd of [serverFd, clientFd, acceptedFd]) {
      expect(opened).toContainEqual({
        fd,
        target: expect.stringMatching(/^socket:\[\d+\]$/),
        kind: 'socket',
      });
    }
    expect(lineOf(opened, serverFd)).toMatch(
      new RegExp(
        `^fd ${serverFd}: unix stream socket listening, at ${path} \\(socket:\\[\\d+\\]\\)$`,
      ),
    );
    expect(lineOf(opened, acceptedFd)).toContain(`unix stream socket connected, at ${path}`);
    expect(lineOf(opened, clientFd)).toContain('unix stream socket connected, unnamed');
    expect(opened).toContainEqual({ fd: fifo.fd, target: join(dir, 'fifo'), kind: 'pipe' });
    expect(lineOf(opened, fifo.fd)).toBe(`fd ${fifo.fd}: FIFO ${join(dir, 'fifo')}`);
    expect(opened).toContainEqual({ fd: file.fd, target: join(dir, 'data.txt'), kind: 'file' });
    expect(lineOf(opened, file.fd)).toBe(`fd ${file.fd}: file ${join(dir, 'data.txt')}`);
    expect(opened).toContainEqual({ fd: ptmx.fd, target: '/dev/ptmx', kind: 'pty' });
    expect(lineOf(opened, ptmx.fd)).toMatch(
      new RegExp(`^fd ${ptmx.fd}: PTY master \\(/dev/pts/\\d+\\)$`),
    );

    client.destroy();
    accepted.destroy();
    server.close();
    fifo.close();
    file.close();
    ptmx.close();
    await diffEmpties(before);
  });

  it("LK-03 a child's stdio is a unix socket pair, unnamed; the runtime's /dev/null is not reported", async () => {
    const before = snapshot();
    const child = spawnTracked('cat', []);
    await new Promise((resolve) => child.once('spawn', resolve));
    const opened = fdDiff(before, snapshot());
    const stdio = [child.stdin, child.stdout, child.stderr].map(
      (s) => (s as unknown as { _handle: { fd: number } })._handle.fd,
    );
    for (const fd of stdio) {
      expect(opened.find((o) => o.fd === fd)?.kind).toBe('socket');
      expect(lineOf(opened, fd)).toContain(
        "unix stream socket connected, unnamed, e.g. a child process's stdio",
      );
    }
    expect(opened.filter((o) => isRuntimeFd(o.target))).toEqual([]);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('close', resolve));
    await diffEmpties(before);
  });

  it('LK-03 TCP sockets are described by their addresses and state', async () => {
    const before = snapshot();
    const server = createServer();
    const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const client = connect(port, '127.0.0.1');
    onTestFinished(async () => {
      client.destroy();
      (await accepted).destroy();
      await new Promise((resolve) => server.close(resolve));
    });
    await new Promise<void>((resolve) => client.once('connect', resolve));
    await accepted;
    const opened = fdDiff(before, snapshot());
    const lines = describeFds(opened);
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(`^fd \\d+: TCP listening on 127\\.0\\.0\\.1:${port} \\(socket:\\[\\d+\\]\\)$`),
      ),
    );
    const local = `127.0.0.1:${client.localPort}`;
    expect(lines).toContainEqual(
      expect.stringContaining(`TCP ${local} → 127.0.0.1:${port} ESTABLISHED`),
    );
    expect(lines).toContainEqual(
      expect.stringContaining(`TCP 127.0.0.1:${port} → ${local} ESTABLISHED`),
    );
    client.destroy();
    (await accepted).destroy();
    server.close();
    await diffEmpties(before);
  });

  it('LK-03 a file with a newline, bytes that are not UTF-8 and a 255-byte name is shown escaped, on one line', async () => {
    const dir = testDir();
    const odd = Buffer.concat([Buffer.from(`${dir}/a\nb`), Buffer.from([0xff, 0x5c])]);
    writeFileSync(odd, '');
    const long = join(dir, 'x'.repeat(255));
    const before = snapshot();
    const a = openTracked(odd, 'r');
    const b = openTracked(long, 'w');
    const opened = fdDiff(before, snapshot());
    expect(opened).toContainEqual({ fd: a.fd, target: `${dir}/a\\x0ab\\xff\\\\`, kind: 'file' });
    expect(opened).toContainEqual({ fd: b.fd, target: long, kind: 'file' });
    expect(lineOf(opened, a.fd).split('\n')).toHaveLength(1);
    a.close();
    b.close();
    await diffEmpties(before);
  });

  it('LK-03 the snapshot is a readdir and an fstat per fd: well under a millisecond for 40 fds', () => {
    const dir = testDir();
    writeFileSync(join(dir, 'f'), '');
    const base = snapshot().size;
    for (let i = base; i < 40; i += 1) openTracked(join(dir, 'f'), 'r');
    const times: number[] = [];
    for (let i = 0; i < 300; i += 1) {
      const began = performance.now();
      fdSnapshot();
      times.push(performance.now() - began);
    }
    times.sort((x, y) => x - y);
    // About 0.06 ms on the 2-core CI VM; the bound only catches a path walk per fd creeping back.
    expect(times[150]).toBeLessThan(0.5);
  });
});

describe('leak sanitizer: the fd table diff, from a given table', () => {
  /** A reader over a fixed table: fd → [dev:ino, target, type]. */
  function fakeReader(
    fds: Record<number, [string, string, ReturnType<FdReader['type']>?]>,
    files: Record<string, string> = {},
  ): FdReader {
    return {
      list: () => [...Object.keys(fds), '99'], // 99: the readdir's own fd, closed by now
      id: (fd) => fds[fd]?.[0],
      target: (fd) => (fds[fd] ? Buffer.from(fds[fd][1]) : undefined),
      type: (fd) => fds[fd]?.[2],
      read: (path) => files[path] ?? null,
    };
  }

  it('LK-03 without an fd dir (macOS, Windows) there is no snapshot', () => {
    const reader = { ...fakeReader({}), list: () => undefined };
    expect(fdSnapshot(reader)).toBeUndefined();
  });

  it("LK-03 the readdir's own fd is left out; a number closed and reused for another object is in the diff", () => {
    const before = fdSnapshot(fakeReader({ 3: ['1:10', '/a'], 4: ['1:11', '/b'] }));
    const now = fakeReader({
      3: ['1:10', '/a'],
      4: ['1:12', '/c', 'file'],
      5: ['9:7', 'socket:[7]'],
    });
    const after = fdSnapshot(now);
    expect([...(after?.keys() ?? [])]).toEqual([3, 4, 5]);
    expect(fdDiff(before as FdTable, after as FdTable, { reader: now })).toEqual([
      { fd: 4, target: '/c', kind: 'file' },
      { fd: 5, target: 'socket:[7]', kind: 'socket' },
    ]);
  });

  it("LK-03 the runtime's own fds (anonymous inodes, /dev/null) are noise: left out unless asked for", () => {
    const now = fakeReader({
      7: ['2:1', 'anon_inode:[eventpoll]'],
      8: ['2:1', 'anon_inode:[eventfd]'],
      9: ['2:1', 'anon_inode:inotify'],
      10: ['3:4', '/dev/null', 'char'],
      11: ['5:6', 'pipe:[6]'],
    });
    const after = fdSnapshot(now) as FdTable;
    expect(fdDiff(new Map(), after, { reader: now })).toEqual([
      { fd: 11, target: 'pipe:[6]', kind: 'pipe' },
    ]);
    expect(fdDiff(new Map(), after, { reader: now, runtime: true }).map((o) => o.kind)).toEqual([
      'other',
      'other',
      'other',
      'other',
      'pipe',
    ]);
  });

  it("LK-03 a pipe with both ends in this process is said to be a runtime's or a Worker's; a file closed since the snapshot is not reported", () => {
    const now = fakeReader({
      11: ['5:6', 'pipe:[6]'],
      12: ['5:6', 'pipe:[6]'],
      13: ['5:8', 'pipe:[8]'],
    });
    const after = new Map(fdSnapshot(now) as FdTable).set(14, '1:2'); // 14 closed since
    const opened = fdDiff(new Map(), after, { reader: now });
    expect(describeFds(opened, now)).toEqual([
      "fd 11: pipe, both ends held by this process (pipe:[6]): a runtime's or a Worker's",
      "fd 12: pipe, both ends held by this process (pipe:[6]): a runtime's or a Worker's",
      'fd 13: pipe (pipe:[8])',
    ]);
  });

  it('LK-03 socket tables are read only when there is a socket to describe; IPv6 and UDP rows are described', () => {
    const files = {
      '/proc/net/tcp6': [
        '  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
        '   0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 501 1 0000000000000000 100 0 0 10 0',
      ].join('\n'),
      '/proc/net/udp': [
        '   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops',
        '  1: 0100007F:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 502 2 0000000000000000 0',
      ].join('\n'),
    };
    const read = vi.fn((path: string) => (files as Record<string, string>)[path] ?? null);
    const reader = { ...fakeReader({ 3: ['1:1', '/f', 'file'] }), read };
    describeFds([{ fd: 3, target: '/f', kind: 'file' }], reader);
    expect(read).not.toHaveBeenCalled();
    const lines = describeFds(
      [
        { fd: 4, target: 'socket:[501]', kind: 'socket' },
        { fd: 5, target: 'socket:[502]', kind: 'socket' },
        { fd: 6, target: 'socket:[503]', kind: 'socket' },
      ],
      reader,
    );
    expect(lines).toEqual([
      'fd 4: TCP listening on [::1]:8080 (socket:[501])',
      'fd 5: UDP bound to 127.0.0.1:53 (socket:[502])',
      'fd 6: socket (socket:[503], not in /proc/net: another family, or closed)',
    ]);
    expect(hexAddress('0000000000000000FFFF00000100007F:0050', true)).toBe('[::ffff:127.0.0.1]:80');
    expect(hexAddress('B80D0120000000000000000001000000:0016', true)).toBe('[2001:db8::1]:22');
  });
});

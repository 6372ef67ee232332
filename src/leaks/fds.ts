import { fstatSync, readdirSync, readlinkSync } from 'node:fs';
import { displayName } from '../internal/display-name.js';
import { readProcFile } from '../internal/proc.js';
import { describeSocket, readSocketTables, type SocketTables } from './sockets.js';

/**
 * The fd table diff of LK-03: the file descriptors the test process opened
 * during a scope and left open.
 *
 * The snapshot runs before and after every test, so it reads as little as it
 * can: the names in /proc/<pid>/fd (one readdir) and an `fstat` of each fd
 * (a syscall on the number itself, no path walk), keeping each fd's object
 * as `dev:ino`. Link targets (`readlink`, some 4 µs each, three times an
 * fstat) are read only for the fds in a diff. A number that was closed and
 * reused for another object is seen by its new `dev:ino`; the same object
 * reopened at the same number is not a change. All PTY masters share one
 * inode, so one master closed and another opened at the same number is not
 * told apart.
 *
 * Noise, not a test's leak: descriptors the runtime (Node, libuv, V8) opens
 * lazily and keeps for the life of the process or of a Worker's event loop:
 * anonymous inodes (`anon_inode:[eventpoll]`, `[eventfd]`, `[signalfd]`,
 * `[timerfd]`, `[io_uring]`, `[pidfd]`, `anon_inode:inotify` — libuv keeps
 * one inotify fd per loop after the first `fs.watch`, even once every watcher
 * is closed) and `/dev/null` (libuv opens it at the first child process and
 * keeps it). `fdDiff` leaves them out unless asked (`runtime: true`). A
 * Worker left running shows as such anonymous inodes plus both ends of a
 * pipe: the pipe is reported, and `describeFds` says both its ends are held
 * by this process, which a test's own pipe to a child never is.
 *
 * The fd table is the process's: a test file in a worker thread shares it
 * with the other files running in the same process, so only a process per
 * test file (vitest's `forks` pool, jest's workers) tells tests apart.
 */

/** Each open fd of the process and the object it refers to (`dev:ino`). */
export type FdTable = ReadonlyMap<number, string>;

/** What an fd refers to, from its link target and its file type. */
export type FdKind = 'socket' | 'pipe' | 'pty' | 'file' | 'dir' | 'other';

/** An fd open at the end of a scope that was not open, or referred to something else, at its start. */
export interface OpenedFd {
  fd: number;
  /**
   * Its link target in /proc: `socket:[123]`, `pipe:[456]`, `/dev/ptmx`, a
   * path (` (deleted)` appended when unlinked); control characters and bytes
   * that are not UTF-8 written as `\xNN`.
   */
  target: string;
  kind: FdKind;
}

/** How the fd table is read; tests of other platforms and edge cases pass their own. */
export interface FdReader {
  /** The names in the process's fd dir; undefined where there is none (macOS, Windows). */
  list(): string[] | undefined;
  /** `dev:ino` of what an open fd refers to; undefined when it is not open (any more). */
  id(fd: number): string | undefined;
  /** The link target of an open fd, as bytes; undefined when it is not open (any more). */
  target(fd: number): Buffer | undefined;
  /** The file type of what an fd refers to (from fstat); undefined when it is not open. */
  type(fd: number): 'file' | 'dir' | 'fifo' | 'socket' | 'char' | 'other' | undefined;
  /** Text of a /proc file (`/proc/net/unix`, `/proc/self/fdinfo/3`): null/undefined when missing/unreadable. */
  read(path: string): string | null | undefined;
}

function fdDir(): string {
  return `/proc/${process.pid}/fd`;
}

/** Reads /proc/<pid>/fd of this process. */
export const procFdReader: FdReader = {
  list() {
    try {
      return readdirSync(fdDir());
    } catch {
      return undefined;
    }
  },
  id(fd) {
    try {
      const stat = fstatSync(fd);
      return `${stat.dev}:${stat.ino}`;
    } catch {
      return undefined; // the readdir's own fd, closed by now; or closed meanwhile
    }
  },
  target(fd) {
    try {
      return readlinkSync(`${fdDir()}/${fd}`, 'buffer');
    } catch {
      return undefined;
    }
  },
  type(fd) {
    try {
      const stat = fstatSync(fd);
      if (stat.isFile()) return 'file';
      if (stat.isDirectory()) return 'dir';
      if (stat.isFIFO()) return 'fifo';
      if (stat.isSocket()) return 'socket';
      if (stat.isCharacterDevice()) return 'char';
      return 'other';
    } catch {
      return undefined;
    }
  },
  read: readProcFile,
};

/**
 * The fds open in this process now, each with the object it refers to;
 * undefined where there is no /proc/<pid>/fd (macOS, Windows). The fd of
 * the readdir itself is closed by the time its entry is read, and left out.
 * About 60 µs for 40 fds (a readdir and 40 fstats).
 */
export function fdSnapshot(reader: FdReader = procFdReader): FdTable | undefined {
  const names = reader.list();
  if (names === undefined) return undefined;
  const table = new Map<number, string>();
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd)) continue;
    const id = reader.id(fd);
    if (id !== undefined) table.set(fd, id);
  }
  return table;
}

/** Options of `fdDiff`. */
export interface FdDiffOptions {
  /**
   * Also return the runtime's own descriptors (anonymous inodes, `/dev/null`),
   * as kind `other`.
   * @default false
   */
  runtime?: boolean;
  /** @default procFdReader */
  reader?: FdReader;
}

/**
 * The fds open in `after` that were not open in `before`, or that refer to
 * another object now (a number closed and reused), by fd. Their targets are
 * read now, so call it right after the `after` snapshot; an fd closed since
 * is not returned (it is no longer open). The runtime's own fds are left
 * out (see the module's notes) unless `runtime: true`.
 * @example
 * const before = fdSnapshot();
 * // … the test …
 * const after = fdSnapshot();
 * const opened = before && after ? fdDiff(before, after) : [];
 */
export function fdDiff(before: FdTable, after: FdTable, options: FdDiffOptions = {}): OpenedFd[] {
  const reader = options.reader ?? procFdReader;
  const opened: OpenedFd[] = [];
  for (const [fd, id] of after) {
    if (before.get(fd) === id) continue;
    const bytes = reader.target(fd);
    if (bytes === undefined) continue; // closed since
    const target = displayName(bytes);
    if (isRuntimeFd(target)) {
      if (options.runtime) opened.push({ fd, target, kind: 'other' });
      continue;
    }
    opened.push({ fd, target, kind: kindOf(target, () => reader.type(fd)) });
  }
  return opened.sort((a, b) => a.fd - b.fd);
}

/** Devices the runtime opens and keeps (libuv: /dev/null at the first child process). */
const RUNTIME_DEVICES = new Set(['/dev/null']);

/**
 * Whether a link target is one of the runtime's own descriptors: an
 * anonymous inode (`anon_inode:[eventfd]`, `anon_inode:inotify`, …) or
 * `/dev/null`.
 */
export function isRuntimeFd(target: string): boolean {
  return target.startsWith('anon_inode:') || RUNTIME_DEVICES.has(target);
}

/** The kind of an fd from its target, asking for its file type only for a path. */
export function kindOf(
  target: string,
  type: () => ReturnType<FdReader['type']> = () => undefined,
): FdKind {
  if (target.startsWith('socket:[')) return 'socket';
  if (target.startsWith('pipe:[')) return 'pipe';
  if (isPty(target)) return 'pty';
  if (!target.startsWith('/')) return 'other'; // net:[…], mnt:[…], anon_inode:…
  switch (type()) {
    case 'dir':
      return 'dir';
    case 'fifo':
      return 'pipe';
    case 'socket':
      return 'socket';
    case 'char':
    case 'other':
      return 'other';
    default:
      return 'file'; // a file, or one whose type could not be read any more
  }
}

function isPty(target: string): boolean {
  return target === '/dev/ptmx' || /^\/dev\/pts\/(ptmx|\d+)$/.test(target);
}

/**
 * One readable line per fd: `fd 23: unix stream socket listening at /tmp/t/s.sock`,
 * `fd 24: TCP 127.0.0.1:40312 → 127.0.0.1:8080 ESTABLISHED`, `fd 25: PTY master
 * (/dev/pts/3)`, `fd 26: file /tmp/t/data.json`. Reads /proc/net/unix, tcp
 * and tcp6 once, and only when there is a socket to describe; a PTY master's
 * /proc/<pid>/fdinfo for its number.
 */
export function describeFds(
  opened: readonly OpenedFd[],
  reader: FdReader = procFdReader,
): string[] {
  const sockets: SocketTables | undefined = opened.some((o) => o.kind === 'socket')
    ? readSocketTables(reader.read)
    : undefined;
  const pipes = new Map<string, number>();
  for (const o of opened)
    if (o.kind === 'pipe') pipes.set(o.target, (pipes.get(o.target) ?? 0) + 1);
  return opened.map((o) => `fd ${o.fd}: ${describeOne(o, sockets, pipes, reader)}`);
}

function describeOne(
  o: OpenedFd,
  sockets: SocketTables | undefined,
  pipes: ReadonlyMap<string, number>,
  reader: FdReader,
): string {
  switch (o.kind) {
    case 'socket': {
      const inode = /^socket:\[(\d+)\]$/.exec(o.target)?.[1];
      if (inode === undefined) return `unix socket file ${o.target}`;
      return sockets ? describeSocket(inode, sockets) : `socket (${o.target})`;
    }
    case 'pipe':
      if (o.target.startsWith('/')) return `FIFO ${o.target}`;
      return (pipes.get(o.target) ?? 0) > 1
        ? `pipe, both ends held by this process (${o.target}): a runtime's or a Worker's`
        : `pipe (${o.target})`;
    case 'pty':
      return o.target.endsWith('ptmx') ? `PTY master${ptyIndex(o.fd, reader)}` : `PTY ${o.target}`;
    case 'dir':
      return `dir ${o.target}`;
    case 'file':
      return `file ${o.target}`;
    default:
      return o.target;
  }
}

/** ` (/dev/pts/3)` for a PTY master, from its fdinfo (Linux ≥ 4.x); empty when not said. */
function ptyIndex(fd: number, reader: FdReader): string {
  const info = reader.read(`/proc/${process.pid}/fdinfo/${fd}`);
  const index = typeof info === 'string' ? /^tty-index:\s*(\d+)$/m.exec(info)?.[1] : undefined;
  return index === undefined ? '' : ` (/dev/pts/${index})`;
}

import { existsSync, lstatSync, unlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { basename, dirname, posix } from 'node:path';
import { describeValue } from '../internal/describe.js';
import { InvalidOptionError } from '../internal/errors.js';
import { ProxyListenError } from './errors.js';

/**
 * Where the proxy listens or connects: an absolute Unix socket path (a
 * named pipe `\\.\pipe\name` on Windows), or TCP host and port (`host`
 * defaults to `'127.0.0.1'`).
 */
export type Address = string | { host?: string; port: number };

/** A TCP address with its real port, as `proxy.address` gives it for a TCP `listen`. */
export interface TcpAddress {
  host: string;
  port: number;
}

/**
 * The type of `proxy.address` for a `listen` option of type `L`: the socket
 * path (a string) for a path, a {@link TcpAddress} for `{ host, port }`.
 * Either can be passed to `net.connect()` as it is.
 */
export type ListenAddress<L extends Address = Address> = L extends string ? string : TcpAddress;

/** @internal A validated address. */
export type ResolvedAddress =
  | { kind: 'unix'; path: string }
  | { kind: 'pipe'; path: string }
  | { kind: 'tcp'; host: string; port: number }
  /** proxyStdio(): no listening at all; `path` says which command. */
  | { kind: 'stdio'; path: string };

/** A Windows named pipe path: `\\.\pipe\<name>` (or `\\?\pipe\<name>`). */
const NAMED_PIPE = /^\\\\[.?]\\pipe\\[^\\]/i;
/** The longest pipe name Windows takes (256 characters, the `\\.\pipe\` included). */
const PIPE_NAME_LIMIT = 256;

/** @internal Bytes a Unix socket path may have, without its terminating NUL (sun_path is 108 on Linux, 104 elsewhere). */
export function socketPathLimit(platform: NodeJS.Platform): number {
  return platform === 'linux' || platform === 'android' ? 107 : 103;
}

/**
 * @internal Validate the `listen` or `upstream` option of `where` (e.g. `createFrameProxy()`).
 * A socket path must be absolute: a relative one would follow the cwd, which
 * tests change, and the exit cleanup and the leftover sweep must find it again.
 */
export function resolveAddress(
  value: unknown,
  option: 'listen' | 'upstream',
  where = 'createFrameProxy()',
  platform: NodeJS.Platform = process.platform,
): ResolvedAddress {
  const expected =
    platform === 'win32'
      ? 'a named pipe path (\\\\.\\pipe\\name) or { host, port }'
      : 'an absolute Unix socket path or { host, port }';
  const the = `the \`${option}\` option of ${where}`;
  if (value === undefined) {
    throw new InvalidOptionError(
      `Missing ${the}: pass ${expected}${option === 'listen' ? ' (port 0 picks a free port)' : ''}.`,
    );
  }
  if (typeof value === 'string') {
    if (value === '' || value.includes('\0')) {
      throw new InvalidOptionError(
        `Expected ${the} to be ${expected}, got ${describeValue(value)}.`,
      );
    }
    if (NAMED_PIPE.test(value)) {
      if (platform !== 'win32') {
        throw new InvalidOptionError(
          `${capitalize(the)} ${JSON.stringify(value)} is a Windows named pipe, and this is ${platform}: pass an absolute Unix socket path here, such as join(dir, 'proxy.sock') with dir from mkdtemp.`,
        );
      }
      if (value.length > PIPE_NAME_LIMIT) {
        throw new InvalidOptionError(
          `${capitalize(the)} is a named pipe of ${value.length} characters; Windows takes at most ${PIPE_NAME_LIMIT}: ${value}.`,
        );
      }
      return { kind: 'pipe', path: value };
    }
    if (platform === 'win32') {
      throw new InvalidOptionError(
        `${capitalize(the)} ${JSON.stringify(value)} is a file path; on Windows Node listens and connects on named pipes, not socket files. Pass a pipe name of this test's own, such as \`\\\\.\\pipe\\shimkit-\${process.pid}-\${n}\`, or { host: '127.0.0.1', port: 0 }.`,
      );
    }
    if (!posix.isAbsolute(value)) {
      throw new InvalidOptionError(
        `Expected ${the} to be an absolute socket path, got ${describeValue(value)}: a relative path follows the cwd. Pass an absolute path, such as join(dir, ${JSON.stringify(basename(value) || 'proxy.sock')}) with dir from mkdtemp.`,
      );
    }
    const bytes = Buffer.byteLength(value);
    const limit = socketPathLimit(platform);
    if (bytes > limit) {
      throw new InvalidOptionError(
        `The \`${option}\` socket path is ${bytes} bytes; the limit on ${platform} is ${limit}: ${value}. Use a shorter dir (for example one made with mkdtemp under /tmp).`,
      );
    }
    return { kind: 'unix', path: value };
  }
  if (typeof value === 'object' && value !== null && 'port' in value) {
    const { host = '127.0.0.1', port } = value as { host?: unknown; port: unknown };
    const portOk = Number.isInteger(port) && (port as number) >= 0 && (port as number) <= 65535;
    if (!portOk || typeof host !== 'string' || host === '') {
      throw new InvalidOptionError(
        `Expected ${the} to be ${expected} with a port from 0 to 65535, got ${describeValue(value)}.`,
      );
    }
    if (option === 'upstream' && port === 0) {
      throw new InvalidOptionError(
        `The \`upstream\` option of ${where} needs the real port of the server, not 0.`,
      );
    }
    return { kind: 'tcp', host, port: port as number };
  }
  throw new InvalidOptionError(`Expected ${the} to be ${expected}, got ${describeValue(value)}.`);
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** @internal */
export function formatAddress(address: ResolvedAddress): string {
  return address.kind === 'tcp' ? `${address.host}:${address.port}` : address.path;
}

/** @internal Why `server.listen()` failed, in words that say what to do. */
export function listenError(address: ResolvedAddress, cause: unknown): ProxyListenError {
  const errno = (cause as NodeJS.ErrnoException | undefined)?.code;
  const where = formatAddress(address);
  const reason = cause instanceof Error ? cause.message : String(cause);
  let message = `Cannot listen on ${where}: ${reason}.`;
  if (address.kind === 'unix') {
    const dir = dirname(address.path);
    if (errno === 'ENOTDIR') {
      message = `Cannot listen on ${where}: ${dir} is not a dir, or a part of it is not (ENOTDIR). Listen in a dir made with mkdtemp.`;
    } else if ((errno === 'ENOENT' || errno === 'EACCES') && !existsSync(dir)) {
      // libuv reports a missing dir as EACCES, as Windows does.
      message = `Cannot listen on ${where}: the dir ${dir} does not exist (${errno}). Create it first (mkdirSync(dir, { recursive: true })), or listen in a dir made with mkdtemp.`;
    } else if (errno === 'EACCES' || errno === 'EPERM' || errno === 'EROFS') {
      message = `Cannot listen on ${where}: no permission to create a socket in ${dir} (${errno}). Listen in a dir you can write, such as one made with mkdtemp.`;
    } else if (errno === 'EADDRINUSE') {
      message = `Cannot listen on ${where}: another process started listening there (EADDRINUSE). Use a path of this test's own, in a dir made with mkdtemp.`;
    }
  } else if (address.kind === 'pipe') {
    if (errno === 'EADDRINUSE' || errno === 'EACCES') {
      message = `Cannot listen on ${where}: another server has this pipe name (${errno}). Use a name of this test's own, with the pid and a counter in it.`;
    }
  } else if (errno === 'EADDRINUSE') {
    message = `Cannot listen on ${where}: the port is in use (EADDRINUSE). Use port 0 to pick a free one, then connect to proxy.address.`;
  } else if (errno === 'EACCES' || errno === 'EPERM') {
    message = `Cannot listen on ${where}: permission denied (${errno}); ports below 1024 need privileges. Use port 0 to pick a free one.`;
  } else if (errno === 'EADDRNOTAVAIL' || errno === 'ENOTFOUND' || errno === 'EAI_AGAIN') {
    message = `Cannot listen on ${where}: the host is not an address of this machine (${errno}). Use a local one, such as 127.0.0.1.`;
  }
  return new ProxyListenError(message, where, errno, cause);
}

/**
 * @internal Make a Unix listen path usable: nothing there is fine; a dead socket left by
 * a crashed process is removed; a live socket or any other file is an error.
 */
export async function clearStaleSocket(path: string): Promise<void> {
  if (!existsSync(path)) return;
  if (!lstatSync(path).isSocket()) {
    throw new InvalidOptionError(
      `Cannot listen on ${path}: a file that is not a socket is in the way.`,
    );
  }
  if (await answers(path)) {
    throw new InvalidOptionError(`Cannot listen on ${path}: another process is listening there.`);
  }
  unlinkSync(path);
}

/**
 * @internal Refuse a named pipe another server already has. libuv asks
 * Windows for the first instance of the name, but not every Windows-like
 * system enforces that (Wine does not), and a second instance would take
 * connections meant for the first: so ask whether anyone answers.
 */
export async function assertPipeFree(address: { kind: 'pipe'; path: string }): Promise<void> {
  if (await answers(address.path, ['EBUSY'])) {
    throw listenError(
      address,
      Object.assign(new Error('the pipe name is in use'), { code: 'EADDRINUSE' }),
    );
  }
}

/** Whether a server accepts a connection at `path` (or fails with one of `busyCodes`, which says one is there). */
function answers(path: string, busyCodes: readonly string[] = []): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const probe = connect({ path });
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', (error: NodeJS.ErrnoException) =>
      resolve(busyCodes.includes(error.code ?? '')),
    );
  });
}

import { existsSync, lstatSync, unlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { describeValue } from '../internal/describe.js';
import { InvalidOptionError } from '../internal/errors.js';

/** Where the proxy listens or connects: a Unix socket path, or TCP host and port. */
export type Address = string | { host?: string; port: number };

export type ResolvedAddress =
  | { kind: 'unix'; path: string }
  | { kind: 'tcp'; host: string; port: number };

/** Bytes a Unix socket path may have, without its terminating NUL (sun_path is 108 on Linux, 104 elsewhere). */
export function socketPathLimit(platform: NodeJS.Platform): number {
  return platform === 'linux' || platform === 'android' ? 107 : 103;
}

export function resolveAddress(
  value: unknown,
  option: 'listen' | 'upstream',
  platform: NodeJS.Platform = process.platform,
): ResolvedAddress {
  const expected = 'a Unix socket path or { host, port }';
  if (typeof value === 'string') {
    if (value === '' || value.includes('\0')) {
      throw new InvalidOptionError(
        `Expected the \`${option}\` option to be ${expected}, got ${describeValue(value)}.`,
      );
    }
    if (/^\\\\[.?]\\pipe\\/i.test(value)) {
      throw new InvalidOptionError(
        `The \`${option}\` option ${JSON.stringify(value)} is a Windows named pipe; this version of the proxy supports Unix sockets and TCP.`,
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
        `Expected the \`${option}\` option to be ${expected} with a port from 0 to 65535, got ${describeValue(value)}.`,
      );
    }
    if (option === 'upstream' && port === 0) {
      throw new InvalidOptionError(
        'The `upstream` option needs the real port of the server, not 0.',
      );
    }
    return { kind: 'tcp', host, port: port as number };
  }
  throw new InvalidOptionError(
    `Expected the \`${option}\` option to be ${expected}, got ${describeValue(value)}.`,
  );
}

export function formatAddress(address: ResolvedAddress): string {
  return address.kind === 'unix' ? address.path : `${address.host}:${address.port}`;
}

/**
 * Make a Unix listen path usable: nothing there is fine; a dead socket left by
 * a crashed process is removed; a live socket or any other file is an error.
 */
export async function clearStaleSocket(path: string): Promise<void> {
  if (!existsSync(path)) return;
  if (!lstatSync(path).isSocket()) {
    throw new InvalidOptionError(
      `Cannot listen on ${path}: a file that is not a socket is in the way.`,
    );
  }
  const alive = await new Promise<boolean>((resolve) => {
    const probe = connect({ path });
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (alive) {
    throw new InvalidOptionError(`Cannot listen on ${path}: another process is listening there.`);
  }
  unlinkSync(path);
}

import { endianness } from 'node:os';
import { displayName } from '../internal/display-name.js';

/**
 * What Linux says about a socket by its inode, for the leak report (LK-03):
 * /proc/net/unix (its path, listening or connected) and /proc/net/tcp, tcp6,
 * udp, udp6 (its addresses and state). Read once per report, and only when
 * there is a socket to describe.
 */

/** One row of the socket tables, by inode. */
export type SocketRow =
  | { family: 'unix'; type: string; listening: boolean; connected: boolean; path: string }
  | { family: 'TCP' | 'UDP'; local: string; remote: string; state: string };

export type SocketTables = ReadonlyMap<string, SocketRow>;

const TCP_STATES: Record<string, string> = {
  '01': 'ESTABLISHED',
  '02': 'SYN_SENT',
  '03': 'SYN_RECV',
  '04': 'FIN_WAIT1',
  '05': 'FIN_WAIT2',
  '06': 'TIME_WAIT',
  '07': 'CLOSE',
  '08': 'CLOSE_WAIT',
  '09': 'LAST_ACK',
  '0A': 'LISTEN',
  '0B': 'CLOSING',
};

const UNIX_TYPES: Record<string, string> = {
  '0001': 'stream',
  '0002': 'datagram',
  '0005': 'seqpacket',
};

/** The rows of /proc/net/{unix,tcp,tcp6,udp,udp6} by inode; the tables that cannot be read are skipped. */
export function readSocketTables(read: (path: string) => string | null | undefined): SocketTables {
  const rows = new Map<string, SocketRow>();
  parseUnix(read('/proc/net/unix'), rows);
  for (const [file, family] of [
    ['tcp', 'TCP'],
    ['tcp6', 'TCP'],
    ['udp', 'UDP'],
    ['udp6', 'UDP'],
  ] as const) {
    parseInet(read(`/proc/net/${file}`), family, rows);
  }
  return rows;
}

/** `Num RefCount Protocol Flags Type St Inode Path`: Flags 00010000 is a listening socket; St 03 connected. */
export function parseUnix(text: string | null | undefined, into: Map<string, SocketRow>): void {
  if (typeof text !== 'string') return;
  for (const line of text.split('\n')) {
    const m =
      /^\s*[0-9A-Fa-f]+: \S+ \S+ ([0-9A-Fa-f]+) ([0-9A-Fa-f]+) ([0-9A-Fa-f]+) (\d+)(?: (.*))?$/.exec(
        line,
      );
    if (!m) continue;
    const [, flags = '0', type = '', state = '', inode = '', path = ''] = m;
    into.set(inode, {
      family: 'unix',
      type: UNIX_TYPES[type] ?? `type ${type}`,
      listening: (Number.parseInt(flags, 16) & 0x10000) !== 0,
      connected: state === '03',
      // Read as Latin-1: the path's bytes, shown as in every report line.
      path: displayName(Buffer.from(path, 'latin1')),
    });
  }
}

/** `sl local_address rem_address st … uid timeout inode`, addresses in hex as the kernel keeps them. */
export function parseInet(
  text: string | null | undefined,
  family: 'TCP' | 'UDP',
  into: Map<string, SocketRow>,
  littleEndian = endianness() === 'LE',
): void {
  if (typeof text !== 'string') return;
  for (const line of text.split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (!/^\d+:$/.test(fields[0] ?? '') || fields.length < 10) continue;
    const inode = fields[9] ?? '';
    if (inode === '0') continue; // TIME_WAIT and the like: no socket holds it
    into.set(inode, {
      family,
      local: hexAddress(fields[1] ?? '', littleEndian),
      remote: hexAddress(fields[2] ?? '', littleEndian),
      state: TCP_STATES[(fields[3] ?? '').toUpperCase()] ?? `state ${fields[3]}`,
    });
  }
}

/** `0100007F:1F90` → `127.0.0.1:8080`; 32 hex digits of IPv6 → `[::1]:8080`. */
export function hexAddress(text: string, littleEndian = endianness() === 'LE'): string {
  const [host = '', port = ''] = text.split(':');
  const words: number[][] = [];
  for (let i = 0; i + 8 <= host.length; i += 8) {
    const bytes = [0, 2, 4, 6].map((j) => Number.parseInt(host.slice(i + j, i + j + 2), 16));
    words.push(littleEndian ? bytes.reverse() : bytes);
  }
  const bytes = words.flat();
  const portNumber = Number.parseInt(port, 16);
  if (bytes.length === 4) return `${bytes.join('.')}:${portNumber}`;
  return `[${ipv6(bytes)}]:${portNumber}`;
}

function ipv6(bytes: number[]): string {
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) {
    return `::ffff:${bytes.slice(12).join('.')}`;
  }
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0));
  // The longest run of zero groups (two or more) becomes `::`.
  let bestAt = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i += 1;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j += 1;
    if (j - i > bestLength) {
      bestAt = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestAt === -1) return hex.join(':');
  return `${hex.slice(0, bestAt).join(':')}::${hex.slice(bestAt + bestLength).join(':')}`;
}

/** `unix stream socket listening at /tmp/t/s.sock`, `TCP 127.0.0.1:40312 → 127.0.0.1:8080 ESTABLISHED`. */
export function describeSocket(inode: string, tables: SocketTables): string {
  const row = tables.get(inode);
  if (row === undefined)
    return `socket (socket:[${inode}], not in /proc/net: another family, or closed)`;
  if (row.family === 'unix') {
    const at = row.path === '' ? 'unnamed' : `at ${row.path}`;
    const state = row.listening ? 'listening' : row.connected ? 'connected' : 'not connected';
    const hint = row.path === '' && row.connected ? ", e.g. a child process's stdio" : '';
    return `unix ${row.type} socket ${state}, ${at}${hint} (socket:[${inode}])`;
  }
  if (row.state === 'LISTEN') return `${row.family} listening on ${row.local} (socket:[${inode}])`;
  if (row.family === 'UDP' && row.state === 'CLOSE')
    return `UDP bound to ${row.local} (socket:[${inode}])`;
  return `${row.family} ${row.local} → ${row.remote} ${row.state} (socket:[${inode}])`;
}

import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

/**
 * One file of an npm tarball, as packed (before an installer touches it:
 * npm's bin linking rewrites a CRLF shebang, so only the tarball shows what
 * other installers and a direct run get). `path` is `/`-separated from the
 * package root; entries are under `package/`. Undefined when absent.
 */
export function readPacked(tarball: string, path: string): Buffer | undefined {
  let tar: Buffer;
  try {
    tar = gunzipSync(readFileSync(tarball));
  } catch {
    return undefined;
  }
  let longName: string | undefined;
  for (let at = 0; at + 512 <= tar.length; ) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) break;
    const field = (start: number, length: number) =>
      header
        .subarray(start, start + length)
        .toString('utf8')
        .replace(/\0.*$/s, '');
    const size = Number.parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1);
    const body = tar.subarray(at + 512, at + 512 + size);
    at += 512 + Math.ceil(size / 512) * 512;
    if (type === 'L') {
      longName = body.toString('utf8').replace(/\0.*$/s, '');
      continue;
    }
    const prefix = field(345, 155);
    const name = longName ?? (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100));
    longName = undefined;
    if ((type === '0' || type === '') && name.replace(/^[^/]+\//, '') === path)
      return Buffer.from(body);
  }
  return undefined;
}

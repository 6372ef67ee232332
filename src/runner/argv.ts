import { readFileSync, readlinkSync } from 'node:fs';

/**
 * The call's arguments as raw bytes (base64), when Node's UTF-8 decoding of
 * argv lost something (an invalid byte becomes U+FFFD). Read from
 * /proc/self/cmdline on Linux; undefined when nothing was lost or the raw
 * bytes are not available.
 */
export function rawArgv(args: readonly string[]): string[] | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    const cmdline = readFileSync('/proc/self/cmdline');
    const parts: Buffer[] = [];
    let start = 0;
    for (let i = 0; i < cmdline.length; i++) {
      if (cmdline[i] === 0) {
        parts.push(cmdline.subarray(start, i));
        start = i + 1;
      }
    }
    // node, runner, state dir, then the call's own arguments.
    const own = parts.slice(parts.length - args.length);
    return own.length === args.length ? own.map((b) => b.toString('base64')) : undefined;
  } catch {
    return undefined;
  }
}

/** The path of the call's working dir after it was deleted: from /proc on Linux, else `$PWD`, else "". */
export function deletedCwd(): string {
  try {
    const link = readlinkSync('/proc/self/cwd');
    return link.endsWith(' (deleted)') ? link.slice(0, -' (deleted)'.length) : link;
  } catch {
    return process.env.PWD ?? '';
  }
}

import { existsSync, lstatSync, readFileSync, readlinkSync } from 'node:fs';
import { InvalidOptionError, ShimkitError } from './errors.js';

/**
 * Requirement SEC-03: a dir shimkit puts shims or state in, and did not
 * just make itself, must be the caller's. Another local user who owns it
 * can swap what is inside (`bin/git`), and the next call runs their
 * command as the caller, root included.
 */

/** A dir (or a file in one) that is another user's, or a link where a real dir must be. */
export class NotOwnedError extends ShimkitError {
  /** The path refused. */
  readonly path: string;

  constructor(message: string, path: string) {
    super('ERR_SHIMKIT_NOT_OWNED', message);
    this.path = path;
  }
}

/** Who this process is, as the owner check asks it; injected in tests. */
export interface OwnerHost {
  platform: NodeJS.Platform;
  /** `process.getuid()`; undefined where there are no uids (Windows). */
  uid: number | undefined;
  /** The text of /etc/passwd, or undefined when it cannot be read. */
  passwd(): string | undefined;
}

export function realOwnerHost(): OwnerHost {
  return {
    platform: process.platform,
    uid: typeof process.getuid === 'function' ? process.getuid() : undefined,
    passwd: () => {
      try {
        return readFileSync('/etc/passwd', 'utf8');
      } catch {
        return undefined;
      }
    },
  };
}

/**
 * What is wrong with using the existing dir `path` as the caller's own:
 * `'link'` for a symbolic link, `'not-dir'`, or the uid of the other user
 * who owns it; undefined when it is a real dir the caller owns (always,
 * for the owner, on Windows: no uids there). Throws what `lstat` throws.
 */
export function foreignDir(
  path: string,
  host: OwnerHost = realOwnerHost(),
): 'link' | 'not-dir' | number | undefined {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return 'link';
  if (!stat.isDirectory()) return 'not-dir';
  if (host.platform === 'win32' || host.uid === undefined) return undefined;
  return stat.uid === host.uid ? undefined : stat.uid;
}

const PASS_OWN = 'Pass a dir of your own, or a path that does not exist yet (it is made, 0700).';

/**
 * Throw a `NotOwnedError` unless `path` is a real dir the caller owns.
 * `what` names it in the message (``The `dir` of createMockBinDir()``);
 * `advice` says what to do instead.
 */
export function assertOwnDir(
  path: string,
  what: string,
  { advice = PASS_OWN, host = realOwnerHost() }: { advice?: string; host?: OwnerHost } = {},
): void {
  const problem = foreignDir(path, host);
  if (problem === undefined) return;
  if (problem === 'link') {
    let target = '';
    try {
      target = ` to ${readlinkSync(path)}${existsSync(path) ? '' : ', which does not exist'}`;
    } catch {}
    throw new NotOwnedError(
      `${what}, ${path}, is a symbolic link${target}: shimkit does not follow a link to a dir it puts shims or state in (whoever can change the link can change what runs). ${advice === PASS_OWN ? 'Pass the real dir (its realpath), or a path that does not exist yet.' : advice}`,
      path,
    );
  }
  if (problem === 'not-dir') {
    throw new InvalidOptionError(`${what}, ${path}, is not a dir. ${advice}`);
  }
  throw new NotOwnedError(
    `${what}, ${path}, belongs to ${userName(problem, host)}, not to this process's user (uid ${host.uid}): its owner could change what is in it, and so what runs as this user. ${advice}`,
    path,
  );
}

/** `uid 1001 (alice)`, or `uid 1001` when /etc/passwd does not name it. */
export function userName(uid: number, host: OwnerHost = realOwnerHost()): string {
  const line = host
    .passwd()
    ?.split('\n')
    .find((l) => l.split(':')[2] === String(uid));
  const name = line?.split(':')[0];
  return name ? `uid ${uid} (${name})` : `uid ${uid}`;
}

/**
 * Throw a `NotOwnedError` if the dir `path` (the caller's own) is writable by
 * its group or by anyone: shimkit makes its dirs 0700, so one that is not
 * was changed since, and whoever can write there can swap a shim. Not on
 * Windows (no modes there).
 */
export function assertPrivateDir(
  path: string,
  what: string,
  host: OwnerHost = realOwnerHost(),
): void {
  if (host.platform === 'win32') return;
  const mode = lstatSync(path).mode & 0o777;
  if ((mode & 0o022) === 0) return;
  throw new NotOwnedError(
    `${what}, ${path}, is writable by ${mode & 0o002 ? 'every user' : 'its group'} (mode ${mode.toString(8).padStart(4, '0')}): whoever can write there can swap a shim, and so what runs as this user. Make it private again (chmod 700 ${path}), or make a new mock dir.`,
    path,
  );
}

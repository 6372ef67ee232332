import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ShimkitError } from 'shimkit';
import { type FlagSpecs, type Parsed, positionals } from '../args.js';
import { shQuote } from '../words.js';

/**
 * The dir of a `shimkit serve` (design §9): `server.json` {url, pid,
 * startedAt} while it runs, `control.sock` (a named pipe on Windows) where
 * the other commands reach it, `server.log` for a detached one. Commands
 * tell a server dir from a mock dir by its `server.json`.
 */

export interface ServerInfo {
  url: string;
  pid: number;
  startedAt: number;
}

export const SERVER_JSON = 'server.json';
export const CONTROL_SOCK = 'control.sock';
export const SERVER_LOG = 'server.log';

/** Where the serve of dir `dir` takes control requests: `D/control.sock`, or a pipe on Windows. */
export function controlAddress(dir: string, platform: NodeJS.Platform = process.platform): string {
  if (platform === 'win32') {
    const hash = createHash('sha256').update(resolve(dir).toLowerCase()).digest('hex');
    return `\\\\.\\pipe\\shimkit-${hash.slice(0, 24)}`;
  }
  return join(resolve(dir), CONTROL_SOCK);
}

/**
 * Whether `dir` is (or was: a server that died leaves it) a `shimkit serve`
 * dir. A dir this user may not look into (another user's, 0700) is refused
 * here, naming its owner, rather than taken for a dir without a server.
 */
export function isServerDir(dir: string | undefined): dir is string {
  if (dir === undefined) return false;
  try {
    lstatSync(join(dir, SERVER_JSON));
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM') throw notPermitted(resolve(dir), code);
    return false;
  }
}

/**
 * The refusal for a dir this user cannot look into: the nearest dir on its
 * path that exists is named with its owner and mode (HT-15), since that is
 * what keeps this user out.
 */
export function notPermitted(root: string, code: string): ShimkitError {
  let blocker = root;
  let stat: ReturnType<typeof lstatSync> | undefined;
  for (let dir = root; ; dir = dirname(dir)) {
    try {
      stat = lstatSync(dir);
      blocker = dir;
      break;
    } catch {}
    if (dirname(dir) === dir) break;
  }
  const uid = process.getuid?.();
  const owner =
    stat === undefined
      ? ''
      : `: ${blocker === root ? 'it' : blocker} belongs to ${userName(stat.uid)}, mode ${(Number(stat.mode) & 0o777).toString(8).padStart(4, '0')}${uid === undefined ? '' : `, and this user is ${userName(uid)}`}`;
  return new ShimkitError(
    'ERR_SHIMKIT_NOT_OWNED',
    `${root} is not this user's to use: permission denied (${code}) looking into it${owner}. A server dir is private to the user who ran \`shimkit serve\`: run this as that user, or pass a dir of your own (mktemp -d).`,
  );
}

/** `name (uid N)` from /etc/passwd, or `uid N`. */
function userName(uid: number | bigint): string {
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const [name, , id] = line.split(':');
      if (id === String(uid) && name) return `${name} (uid ${uid})`;
    }
  } catch {}
  return `uid ${uid}`;
}

/**
 * The first positional of `argv` under `specs` (flags taking a value skip
 * it; unknown flags count as switches): the D of `shimkit enqueue D …`,
 * found before the command knows which flags apply.
 */
export function firstPositional(argv: readonly string[], specs: FlagSpecs): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') return argv[i + 1];
    if (!arg.startsWith('-') || arg === '-') return arg;
    const flag = arg.replace(/^--?/, '');
    if (!flag.includes('=') && specs[flag] && specs[flag].kind !== 'switch') i++;
  }
  return undefined;
}

/**
 * Check that `dir` is a real dir this user owns and no one else may write
 * to (as a mock dir must be, SEC-03): whoever can write there can replace
 * `server.json` or the control socket, and so what the tests talk to.
 * `create`: make it (0700, parents as needed) when it is missing.
 */
export function ownServerDir(dir: string, create: boolean): string {
  const root = resolve(dir);
  let stat = lstatOrUndefined(root);
  if (!stat && create) {
    mkdirSync(dirname(root), { recursive: true });
    try {
      mkdirSync(root, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    stat = lstatOrUndefined(root);
  }
  const refuse = (why: string) =>
    new ShimkitError(
      'ERR_SHIMKIT_NOT_OWNED',
      `${root} ${why}. Pass a dir of your own (mktemp -d), or a path that does not exist yet (it is made, 0700).`,
    );
  if (!stat) {
    throw new ShimkitError(
      'ERR_SHIMKIT_NOT_SERVER_DIR',
      `${root} does not exist: no \`shimkit serve --dir ${shQuote(root)}\` runs there.`,
    );
  }
  if (stat.isSymbolicLink()) throw refuse('is a symbolic link (pass the real dir)');
  if (!stat.isDirectory()) throw refuse('is not a dir');
  if (process.platform !== 'win32') {
    const uid = process.getuid?.();
    if (uid !== undefined && stat.uid !== uid) {
      throw refuse(`belongs to ${userName(stat.uid)}, not to this user (${userName(uid)})`);
    }
    if ((stat.mode & 0o022) !== 0) {
      throw refuse(
        `is writable by ${stat.mode & 0o002 ? 'every user' : 'its group'} (mode ${(stat.mode & 0o777).toString(8).padStart(4, '0')}): whoever can write there can replace the control socket`,
      );
    }
  }
  return root;
}

function lstatOrUndefined(path: string) {
  try {
    return lstatSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'EACCES' || code === 'EPERM') throw notPermitted(path, code);
    throw error;
  }
}

/** The server dir of a command: its one positional D, checked to be a private dir of this user's. */
export function serverDir(command: string, args: Parsed): string {
  const [dir] = positionals(command, args, ['D']) as [string];
  return ownServerDir(dir, false);
}

/** `D/server.json`, or a ShimkitError saying no server runs in D. */
export function readServerInfo(dir: string): ServerInfo {
  const path = join(dir, SERVER_JSON);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    throw new ShimkitError(
      'ERR_SHIMKIT_NO_SERVER',
      `no mock server runs in ${dir}: it has no ${SERVER_JSON}. Start one with: eval "$(shimkit serve --dir ${shQuote(dir)} --detach)"`,
    );
  }
  try {
    const info = JSON.parse(text) as ServerInfo;
    if (typeof info.url === 'string' && Number.isInteger(info.pid)) return info;
  } catch {}
  throw new ShimkitError(
    'ERR_SHIMKIT_NOT_SERVER_DIR',
    `${path} is not what \`shimkit serve\` writes ({"url","pid","startedAt"}): ${JSON.stringify(text.slice(0, 80))}.`,
  );
}

/**
 * Whether process `pid` still runs. A zombie counts as gone: a detached
 * server's parent exits at once, and not every init reaps its orphans.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  if (process.platform !== 'linux') return true;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false; // gone between the two looks
  }
}

/** Refuse a dir another live `shimkit serve` uses, or a mock dir; a dead server's files are replaced. */
export function assertFreeDir(root: string): void {
  if (existsSync(join(root, 'shimkit.json'))) {
    throw new ShimkitError(
      'ERR_SHIMKIT_NOT_SERVER_DIR',
      `${root} is a shimkit mock dir (it has shimkit.json): give the server a dir of its own, e.g. --dir "$(mktemp -d)/api".`,
    );
  }
  if (!existsSync(join(root, SERVER_JSON))) return;
  let info: ServerInfo | undefined;
  try {
    info = readServerInfo(root);
  } catch {
    return; // not ours to keep: replaced
  }
  if (info.pid !== process.pid && isAlive(info.pid)) {
    throw new ShimkitError(
      'ERR_SHIMKIT_SERVER_RUNNING',
      `a mock server already runs in ${root} (pid ${info.pid}, ${info.url}): stop it first (shimkit stop ${shQuote(root)}), or use another dir.`,
    );
  }
}

import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { ShimkitError } from 'shimkit';
import { ownerOfPid, ownerText } from '../../internal/leftovers/served.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { assertFreeDir, ownServerDir, SERVER_LOG } from './dir.js';
import { callerPid } from './lifecycle.js';
import { startNotice } from './notice.js';

export interface ServeSettings {
  dir: string;
  listen: { host?: string; port?: number };
  strict: boolean;
  unmatched: 'fail' | 'echo' | undefined;
  json: boolean;
  /** `--cassette` (an absolute path) and its `--cassette-mode`, `--upstream`, `--cassette-timing`. */
  cassette: { path: string; mode?: string; upstream?: string; timing?: string } | undefined;
  /** `--log-body-bytes`, `--log-body-budget` (bytes). */
  logBodyBytes: number | undefined;
  logBodyBudget: number | undefined;
  /** `--playbook` files: absolute paths, each with its JSON as read (PB-07). */
  playbooks: Array<{ path: string; json: unknown }>;
  /** `--owner-pid`: undefined for the default (see lifecycle.ts), 0 for none. */
  ownerPid: number | undefined;
  /** `--idle-timeout` in ms; 0: none. */
  idleMs: number;
  /** `--socket PATH` (absolute): listen there instead of TCP. */
  socket: string | undefined;
  /** `--require-token`: every request must carry the server's token (HT-15). */
  requireToken: boolean;
}

/** The env var naming the fd a detached server writes its ready lines to (then closes). */
export const NOTIFY_VAR = 'SHIMKIT_SERVE_NOTIFY_FD';
/** The env var that hands a detached server its owner (`pid-start-scope`, or `none`). */
export const OWNER_VAR = 'SHIMKIT_SERVE_OWNER';
/** How long `serve --detach` waits for the server to listen. */
const READY_MS = 15_000;
/** How long `serve --detach` waits for the exit status of a server that closed the pipe without its lines. */
const EXIT_MS = 2000;

/**
 * `shimkit serve --detach`: the same command without --detach, in its own
 * process group (session) with its output to D/server.log, and a pipe on
 * its fd 3 for the ready lines. Once they come they are printed and this
 * exits 0, the server running on; if the server exits first, or the
 * deadline passes (then its group is killed), the log is shown.
 */
export async function detach(settings: ServeSettings): Promise<number> {
  const root = ownServerDir(settings.dir, true);
  assertFreeDir(root);
  const ownerPid = settings.ownerPid ?? callerPid();
  const owner = ownerPid === 0 ? undefined : ownerOfPid(ownerPid);
  if (ownerPid !== 0 && owner === undefined) {
    throw new UsageError(
      'serve',
      `--owner-pid ${ownerPid}: no such process runs. Pass the pid of the process the server should end with (e.g. $$ in a shell), or 0 for none.`,
    );
  }
  const logPath = join(root, SERVER_LOG);
  const log = openSync(logPath, 'a', 0o600);
  const argv = [process.argv[1] as string, 'serve', '--dir', root];
  if (settings.listen.port !== undefined) argv.push('--port', String(settings.listen.port));
  if (settings.listen.host !== undefined) argv.push('--host', settings.listen.host);
  if (settings.socket !== undefined) argv.push('--socket', settings.socket);
  if (settings.requireToken) argv.push('--require-token');
  if (settings.strict) argv.push('--strict');
  if (settings.unmatched !== undefined) argv.push('--unmatched', settings.unmatched);
  if (settings.json) argv.push('--json');
  argv.push('--idle-timeout', settings.idleMs === 0 ? '0' : `${settings.idleMs}ms`);
  const cassette = settings.cassette;
  if (cassette) {
    argv.push('--cassette', cassette.path);
    if (cassette.mode !== undefined) argv.push('--cassette-mode', cassette.mode);
    if (cassette.upstream !== undefined) argv.push('--upstream', cassette.upstream);
    if (cassette.timing !== undefined) argv.push('--cassette-timing', cassette.timing);
  }
  if (settings.logBodyBytes !== undefined)
    argv.push('--log-body-bytes', String(settings.logBodyBytes));
  if (settings.logBodyBudget !== undefined)
    argv.push('--log-body-budget', String(settings.logBodyBudget));
  settings.playbooks.forEach((playbook, i) => {
    // A pipe (`--playbook <(…)`) was read here already: the server gets a copy in D.
    argv.push(
      '--playbook',
      regularFile(playbook.path) ? playbook.path : copyInto(root, i, playbook.json),
    );
  });
  const child = spawn(process.execPath, argv, {
    detached: true,
    cwd: root, // a daemon pins no dir of the caller's
    stdio: ['ignore', log, log, 'pipe'],
    env: { ...process.env, [NOTIFY_VAR]: '3', [OWNER_VAR]: owner ? ownerText(owner) : 'none' },
    windowsHide: true,
  });
  closeSync(log);
  const pipe = child.stdio[3] as Readable;
  const exited = new Promise<number | null>((resolve) => {
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : null)));
    child.on('error', () => resolve(null));
  });
  const ready = await new Promise<string | 'timeout'>((resolve) => {
    let text = '';
    const timer = setTimeout(() => resolve('timeout'), READY_MS);
    pipe.setEncoding('utf8');
    pipe.on('data', (chunk: string) => {
      text += chunk;
    });
    pipe.on('error', () => {});
    pipe.on('close', () => {
      clearTimeout(timer);
      resolve(text);
    });
  });
  pipe.destroy();
  if (ready !== 'timeout' && ready.endsWith('\n')) {
    child.unref();
    process.stdout.write(ready);
    process.stderr.write(startNotice(root, settings, owner?.pid, true));
    return ExitCode.ok;
  }
  let code: number | null = null;
  if (ready === 'timeout') killGroup(child.pid);
  else {
    // Its exit status, if it comes soon; the timer is cleared so a quick exit is not held up.
    let timer: NodeJS.Timeout | undefined;
    code = await Promise.race([
      exited,
      new Promise<null>((r) => {
        timer = setTimeout(() => r(null), EXIT_MS);
      }),
    ]);
    clearTimeout(timer);
  }
  child.unref();
  const why =
    ready === 'timeout'
      ? `did not listen within ${READY_MS} ms (its process group was killed)`
      : `exited${code === null ? '' : ` with ${code}`} before listening`;
  const error = new ShimkitError(
    'ERR_SHIMKIT_SERVER_START',
    `the server ${why}. Its log, ${logPath}:\n${tail(logPath)}`,
  );
  process.stderr.write(`shimkit serve: ${error.message}\n`);
  // Its own usage or state error (exit 2 or 3) is the answer; anything else is a state problem.
  return code === ExitCode.usage || code === ExitCode.state ? code : ExitCode.state;
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(process.platform === 'win32' ? pid : -pid, 'SIGKILL');
  } catch {
    // gone already
  }
}

/** The log's last 4 KiB, indented. */
function tail(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return `  (cannot read it: ${(error as Error).message})`;
  }
  const last = text.length > 4096 ? `…${text.slice(-4096)}` : text;
  return (last.trimEnd() || '(empty)')
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}

function regularFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** A playbook's JSON written to D (0600), for a detached server to read. */
function copyInto(root: string, i: number, json: unknown): string {
  const path = join(root, `playbook-${i + 1}.json`);
  writeFileSync(path, `${JSON.stringify(json)}\n`, { mode: 0o600 });
  return path;
}

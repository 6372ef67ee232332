import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Env } from '../internal/path-env.js';
import { listProc, readProcFile, readStat } from '../internal/proc.js';
import { taskkill } from './kill.js';

/**
 * Ending the tree of a process that shares its caller's process group (a
 * passthrough's real command: spawned `detached`, it would escape the
 * sandbox's group kill), so a group signal cannot reach only it. POSIX: the
 * process and its descendants are stopped (SIGSTOP, so none can fork away
 * while the tree is read) and then killed. Descendants come from /proc on
 * Linux (each process's parent, from its stat), elsewhere from `ps`.
 * Windows: `taskkill /T /F`.
 */

/** Parent pid to the pids of its children, from one look at every process. */
export type ChildTable = Map<number, number[]>;

function add(table: ChildTable, pid: number, ppid: number): void {
  const children = table.get(ppid);
  if (children) children.push(pid);
  else table.set(ppid, [pid]);
}

/** The table from `ps -A -o pid= -o ppid=` output: a pid and its parent per line. */
export function parsePsTable(text: string): ChildTable {
  const table: ChildTable = new Map();
  for (const line of text.split('\n')) {
    const [pid, ppid] = line.trim().split(/\s+/).map(Number);
    if (Number.isInteger(pid) && Number.isInteger(ppid)) add(table, pid as number, ppid as number);
  }
  return table;
}

/** The table from Linux's /proc; undefined without /proc. */
export function procTable(
  list: () => string[] | undefined = listProc,
  read: (path: string) => string | null | undefined = readProcFile,
): ChildTable | undefined {
  const entries = list();
  if (entries === undefined) return undefined;
  const table: ChildTable = new Map();
  for (const entry of entries) {
    if (entry.charCodeAt(0) > 57 || entry.charCodeAt(0) < 48) continue; // not a pid
    const stat = readStat(entry, read);
    if (stat) add(table, Number(entry), stat.ppid);
  }
  return table;
}

/** `ps` by its full path, so a PATH of mocks (a mock named `ps`) cannot answer; undefined if it cannot run. */
export function psTable(): ChildTable | undefined {
  const ps = ['/bin/ps', '/usr/bin/ps'].find((file) => existsSync(file));
  if (!ps) return undefined;
  const r = spawnSync(ps, ['-A', '-o', 'pid=', '-o', 'ppid='], {
    encoding: 'latin1',
    stdio: ['ignore', 'pipe', 'ignore'],
    timeout: 5000,
  });
  return r.status === 0 ? parsePsTable(r.stdout) : undefined;
}

/** How descendants are read on `platform`. */
export function childTable(platform: NodeJS.Platform): () => ChildTable | undefined {
  return platform === 'linux' ? () => procTable() ?? psTable() : psTable;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // gone already, or not ours
  }
}

/**
 * SIGSTOP `pid`, then each descendant as the tree is read, until a reading
 * finds none that is not stopped yet (a fork that a stop interrupts is
 * abandoned, so a stopped process has no child on the way). Returns every
 * pid stopped, `pid` first.
 */
export function stopTree(pid: number, table: () => ChildTable | undefined): number[] {
  const stopped = new Set<number>();
  let fresh = [pid];
  // Bounded: a tree that forks faster than it can be read still ends.
  for (let pass = 0; fresh.length > 0 && pass < 1000; pass++) {
    for (const p of fresh) {
      signal(p, 'SIGSTOP');
      stopped.add(p);
    }
    const children = table();
    if (!children) break;
    fresh = [];
    for (const p of stopped) {
      for (const child of children.get(p) ?? []) if (!stopped.has(child)) fresh.push(child);
    }
  }
  return [...stopped];
}

/**
 * Kill `pid` and all its descendants. POSIX: stopped first (see `stopTree`),
 * then SIGKILLed; synchronous. Windows: taskkill, and the process itself if
 * that fails.
 */
export async function killTree(
  pid: number,
  platform: NodeJS.Platform = process.platform,
  env: Env = process.env,
): Promise<void> {
  if (platform === 'win32') {
    if ((await taskkill(pid, env)) !== undefined) signal(pid, 'SIGKILL');
    return;
  }
  for (const p of stopTree(pid, childTable(platform))) signal(p, 'SIGKILL');
}

import { readdirSync, readFileSync } from 'node:fs';

/**
 * Reading Linux's /proc: one process's state, process group and start time.
 * Shared by the tree kill (`src/process/kill.ts`) and the leftover sweep.
 */

/** The fields of `/proc/<pid>/stat` that shimkit uses. */
export interface ProcStat {
  /** State letter: `R`, `S`, `D`, `T`, `Z` (zombie), `X` (dead), … */
  state: string;
  /** Parent pid. */
  ppid: number;
  /** Process group id. */
  pgid: number;
  /** Session id. */
  sid: number;
  /** Start time in clock ticks since boot (field 22): with the pid, it names one process. */
  start: number;
}

/**
 * Parse the text of `/proc/<pid>/stat`: "pid (comm) state ppid pgrp …". comm
 * may hold spaces and parentheses, so the fields are read after the last `)`.
 * Undefined when the text is not in that shape.
 */
export function parseStat(text: string): ProcStat | undefined {
  const close = text.lastIndexOf(')');
  if (close === -1) return undefined;
  const fields = text.slice(close + 2).split(' ');
  const state = fields[0] ?? '';
  const ppid = Number(fields[1]);
  const pgid = Number(fields[2]);
  const sid = Number(fields[3]);
  const start = Number(fields[19]);
  if (state === '' || !Number.isInteger(pgid) || !Number.isInteger(start)) return undefined;
  return { state, ppid, pgid, sid, start };
}

/** Whether a state letter is a zombie or a dead process: exited, whether or not reaped. */
export function isDeadState(state: string): boolean {
  return state === 'Z' || state === 'X';
}

/**
 * Text of a /proc file: null when it does not exist (no such process or
 * thread), undefined when it could not be read for another reason (no /proc,
 * hidden by `hidepid`, out of file handles) — callers that must not guess
 * tell the two apart.
 */
export function readProcFile(path: string): string | null | undefined {
  try {
    return readFileSync(path, 'latin1');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ESRCH' ? null : undefined;
  }
}

/** The names in /proc (pids among them), or undefined without /proc. */
export function listProc(): string[] | undefined {
  try {
    return readdirSync('/proc');
  } catch {
    return undefined;
  }
}

/**
 * `/proc/<pid>/stat` of one process (or `<pid>/task/<tid>` of one thread),
 * parsed: null when it does not exist, undefined when it could not be read.
 */
export function readStat(
  pid: number | string,
  read: (path: string) => string | null | undefined = readProcFile,
): ProcStat | null | undefined {
  const text = read(`/proc/${pid}/stat`);
  return typeof text === 'string' ? parseStat(text) : text;
}

/**
 * The processes in group `pgid` with their state letters, from /proc;
 * undefined without /proc.
 */
export function groupMembers(
  pgid: number,
  list: () => string[] | undefined = listProc,
  read: (path: string) => string | null | undefined = readProcFile,
): { pid: number; state: string; start: number }[] | undefined {
  return members((stat) => stat.pgid === pgid, list, read);
}

/** The processes in session `sid` with their state letters and start times, from /proc; undefined without /proc. */
export function sessionMembers(
  sid: number,
  list: () => string[] | undefined = listProc,
  read: (path: string) => string | null | undefined = readProcFile,
): { pid: number; state: string; start: number }[] | undefined {
  return members((stat) => stat.sid === sid, list, read);
}

function members(
  belongs: (stat: ProcStat) => boolean,
  list: () => string[] | undefined,
  read: (path: string) => string | null | undefined,
): { pid: number; state: string; start: number }[] | undefined {
  const entries = list();
  if (entries === undefined) return undefined;
  const found: { pid: number; state: string; start: number }[] = [];
  for (const entry of entries) {
    if (entry.charCodeAt(0) > 57 || entry.charCodeAt(0) < 48) continue; // not a pid
    const stat = readStat(entry, read);
    if (stat && belongs(stat)) {
      found.push({ pid: Number(entry), state: stat.state, start: stat.start });
    }
  }
  return found;
}

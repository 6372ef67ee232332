import { groupMembers, isDeadState, listProc, readProcFile } from '../../internal/proc.js';

/**
 * Who is in the foreground of a PTY process's terminal, for the leak report
 * (LK-02). Node has no `tcgetpgrp()`, and the terminal's master is the
 * helper's (shims/pty.py), so it is read from Linux's /proc: field `tpgid`
 * of `/proc/<pid>/stat` is the foreground process group of the terminal
 * that process is on — the helper's own group while the program runs in
 * it, a job's group when the program made one (a shell's job control).
 */

/** One process of the foreground group. */
export interface ForegroundProcess {
  pid: number;
  /** Its `comm` (the executable's name, at most 15 bytes). */
  name: string;
}

/**
 * The live processes of the foreground group of `helper`'s terminal, the
 * helper left out, lowest pid first; undefined where /proc cannot tell (not
 * Linux, the helper gone, no terminal).
 */
export function terminalForeground(
  helper: number,
  read: (path: string) => string | null | undefined = readProcFile,
  list: () => string[] | undefined = listProc,
): ForegroundProcess[] | undefined {
  const text = read(`/proc/${helper}/stat`);
  if (typeof text !== 'string') return undefined;
  const tpgid = tpgidOf(text);
  if (tpgid === undefined || tpgid <= 0) return undefined;
  const members = groupMembers(tpgid, list, read);
  if (members === undefined) return undefined;
  return members
    .filter((m) => m.pid !== helper && !isDeadState(m.state))
    .sort((a, b) => a.pid - b.pid)
    .map((m) => ({ pid: m.pid, name: read(`/proc/${m.pid}/comm`)?.trim() || '?' }));
}

/** Field 8 of a stat line (`pid (comm) state ppid pgrp session tty_nr tpgid …`): -1 without a terminal. */
export function tpgidOf(stat: string): number | undefined {
  const close = stat.lastIndexOf(')');
  if (close === -1) return undefined;
  const tpgid = Number(stat.slice(close + 2).split(' ')[5]);
  return Number.isInteger(tpgid) ? tpgid : undefined;
}

/** `vim (pid 4250)`, `sort (pid 4251), less (pid 4252)`. */
export function formatForeground(found: readonly ForegroundProcess[]): string {
  if (found.length === 0) return 'nothing but the helper (the program is gone)';
  const shown = found.slice(0, 3).map((p) => `${p.name} (pid ${p.pid})`);
  return `${shown.join(', ')}${found.length > 3 ? ` … and ${found.length - 3} more` : ''}`;
}

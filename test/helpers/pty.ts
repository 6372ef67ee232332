// Shared by the SP-13 tests: a PTY process closed when its test ends, and
// what /proc says about PTY helpers (spares) and a helper's session.
import { readdirSync, readFileSync } from 'node:fs';
import { expect, onTestFinished, vi } from 'vitest';
import { spawnProcess, type TestProcess } from '../../src/index.js';
import { isDeadState, readStat, sessionMembers } from '../../src/internal/proc.js';

/** `spawnProcess`, with the process closed (its tree ended) when the test finishes. */
export function spawned(...args: Parameters<typeof spawnProcess>): TestProcess {
  const p = spawnProcess(...args);
  onTestFinished(async () => {
    await p.close({ graceMs: 0 });
  });
  return p;
}

/** The pids of `parent`'s children running shims/pty.py that have no program yet: spares. */
export function spares(parent = process.pid): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return (
          readStat(pid)?.ppid === parent &&
          readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes('shims/pty.py') &&
          readFileSync(`/proc/${pid}/task/${pid}/children`, 'latin1').trim() === ''
        );
      } catch {
        return false;
      }
    })
    .map(Number);
}

/**
 * Wait until this process has exactly one spare, not counting those in
 * `old` (a spare an earlier test file's copy of the module started, in a
 * worker that runs file after file, idles out on its own); its pid.
 */
export function theSpare(old: ReadonlySet<number> = new Set()): Promise<number> {
  return vi.waitFor(
    () => {
      const found = spares().filter((pid) => !old.has(pid));
      expect(found).toHaveLength(1);
      return found[0] as number;
    },
    { timeout: 10_000 },
  );
}

/** State letter of a process, from /proc. */
export function stateOf(pid: number): string | undefined {
  return readStat(pid)?.state;
}

/** Live members of session `sid`, from /proc. */
export function sessionOf(sid: number): number[] {
  return (sessionMembers(sid) ?? []).filter((m) => !isDeadState(m.state)).map((m) => m.pid);
}

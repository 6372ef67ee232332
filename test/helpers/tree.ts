// A "real" command for passthrough timeout tests: `tool` starts a grandchild
// (`sleep 30`) that holds its stdio, writes both pids down, says "started"
// and waits, so a kill of the direct child alone leaves the caller's reader
// open until the grandchild ends. Whatever of it is left is killed when the
// test finishes.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { isAlive, testDir } from './index.js';

export function treeTool(says: 'stdout' | 'stderr'): {
  /** The dir holding `tool`, for PATH. */
  dir: string;
  /** Its env: where `tool` writes the pids. */
  env: { PID_FILE: string };
  /** The pids of `tool` and its grandchild, once written. */
  tree: () => number[];
} {
  const dir = testDir();
  const pidFile = join(dir, 'tree.pids');
  writeFileSync(
    join(dir, 'tool'),
    `#!/bin/sh\nsleep 30 &\necho $$ $! >"$PID_FILE.tmp" && mv "$PID_FILE.tmp" "$PID_FILE"\necho started${says === 'stderr' ? ' >&2' : ''}\nwait\n`,
    { mode: 0o755 },
  );
  const tree = () =>
    (existsSync(pidFile) ? readFileSync(pidFile, 'utf8').trim().split(' ') : []).map(Number);
  onTestFinished(() => {
    for (const pid of tree()) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  });
  return { dir, env: { PID_FILE: pidFile }, tree };
}

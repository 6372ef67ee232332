import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hostTmpdir } from '../host-tmp.js';
import { childProcess } from '../lazy.js';
import { packageFile } from '../package-files.js';
import { randomName, rootNameStem } from './names.js';
import { processOwner } from './owner.js';

/**
 * Where exit handlers never run — jest gives each test file its own
 * `process` object, whose `exit` event never fires — a small watcher
 * process removes what this process leaves, once it is gone: it checks the
 * owner every 200 ms and then runs the leftover sweep (requirement SP-11, VT-04).
 * One per process: a marker dir named after the owner
 * (`shimkit-watch-<pid>-<start>-<scope>-…`, swept like any root) holds the
 * watcher's pid, so the next test file in the same jest worker finds it.
 * Best effort, never throws; unref'd, so it keeps nothing alive.
 */
export function watchFromOutside(): void {
  try {
    const owner = processOwner();
    const stem = rootNameStem('watch', owner);
    const parent = hostTmpdir();
    for (const name of readdirSync(parent)) {
      if (!name.startsWith(stem)) continue;
      const pid = Number(readFileSync(join(parent, name, 'pid'), 'utf8'));
      if (alive(pid)) return;
    }
    const child = childProcess().spawn(
      process.execPath,
      [
        packageFile(join('dist', 'watcher.cjs')),
        String(owner.pid),
        String(owner.start),
        owner.scope,
      ],
      { detached: true, stdio: 'ignore', env: { PATH: process.env.PATH, TMPDIR: parent } },
    );
    child.on('error', () => {});
    child.unref();
    if (child.pid === undefined) return;
    const marker = join(parent, `${stem}${randomName()}`);
    mkdirSync(marker, { mode: 0o700 });
    writeFileSync(join(marker, 'pid'), String(child.pid), { mode: 0o600 });
  } catch {
    // A safety net only: the next process's sweep still removes the leftovers.
  }
}

function alive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

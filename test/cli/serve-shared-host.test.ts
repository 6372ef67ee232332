import { execFileSync } from 'node:child_process';
import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCommand } from '../helpers/index.js';
import { CLI, shimkit } from './helpers.js';
import { serveDetached, serverTestDir } from './server-helpers.js';

/** Another local user to test with: root runs the suite here, and `shimkit-other` exists. */
const OTHER = 'shimkit-other';
const canSwitch = (() => {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('runuser', ['-u', OTHER, '--', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** `cmd …` run as the other user. */
function asOther(command: string, args: readonly string[]) {
  return runCommand('runuser', ['-u', OTHER, '--', command, ...args]);
}

describe.skipIf(!canSwitch)('another local user (HT-15)', () => {
  it("HT-15 another user's commands on a server dir they may not enter are refused, naming the dir and its owner (exit 3, no stack)", async () => {
    const d = join(serverTestDir(), 'api'); // under a 0700 dir of root's
    await serveDetached(d);
    for (const args of [
      ['expect', d, '--status', '200'],
      ['enqueue', d, '--status', '200'],
      ['requests', d],
      ['verify', d],
      ['stop', d],
      ['tool-calls', d],
      ['serve', '--dir', d],
    ]) {
      const r = await asOther(process.execPath, [CLI, ...args]);
      const stderr = r.stderr.toString();
      expect(r.code, `${args[0]}: ${stderr}`).toBe(3);
      expect(stderr).not.toMatch(/unexpected error|\n\s+at /);
      expect(stderr).toContain(d);
      expect(stderr).toMatch(/belongs to root \(uid 0\)/);
      expect(stderr).toMatch(/this user is shimkit-other \(uid \d+\)/);
    }
    // Nothing of it reached the server.
    const requests = await shimkit(['requests', d, '--json']);
    expect(requests.code).toBe(0);
  });

  it("HT-15 the server dir of another user's server is refused by name (exit 3)", async () => {
    const root = serverTestDir();
    chmodSync(root, 0o1777); // as /tmp is: the other user makes a dir in it
    const d = join(root, 'theirs');
    // Their server, owned by no process (runuser exits at once): the test's dir hook kills it.
    const started = await asOther(process.execPath, [
      CLI,
      'serve',
      '--dir',
      d,
      '--detach',
      '--owner-pid',
      '0',
    ]);
    expect(started.code, started.stderr.toString()).toBe(0);
    for (const args of [
      ['requests', d],
      ['verify', d],
      ['stop', d],
      ['serve', '--dir', d],
    ]) {
      const r = await shimkit(args);
      expect(r.code, r.stderr.toString()).toBe(3);
      expect(r.stderr.toString()).toContain(`${d} belongs to shimkit-other (uid`);
    }
  });
});

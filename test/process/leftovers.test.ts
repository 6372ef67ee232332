import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { realHost } from '../../src/internal/leftovers/host.js';
import { registryName, rootNameStem } from '../../src/internal/leftovers/names.js';
import type { Owner } from '../../src/internal/leftovers/owner.js';
import type { RegistryEntry } from '../../src/internal/leftovers/registry.js';
import { KEEP_MARKER, sweepDirs } from '../../src/internal/leftovers/sweep.js';
import { readStat } from '../../src/internal/proc.js';
import {
  completion,
  type Exit,
  firstJsonLine,
  isAlive,
  runCommand,
  spawnTracked,
  testDir,
} from '../helpers/index.js';
import { inSystemTmpdir } from '../helpers/leaks.js';

/*
 * SPEC SP-11 with real processes. Every process here runs with TMPDIR set to
 * a dir of the test's own, and makes its roots under a custom `tmpDir`
 * parent there, so no test sweeps (or races) the machine's real temp dir.
 * The fixtures use the built package: run `npm run build` first.
 */

const FIXTURE = fileURLToPath(new URL('../fixtures/leftovers-owner.mjs', import.meta.url));

interface Report {
  mockRoot: string;
  sandboxRoot: string;
  socket: string;
  groups: number[];
  pids: number[];
}

interface Layout {
  /** TMPDIR of every process the test starts. */
  tmp: string;
  /** The `tmpDir` parent of their mocks and sandboxes. */
  parent: string;
  socket: string;
  env: NodeJS.ProcessEnv;
}

function layout(): Layout {
  const dir = testDir();
  const tmp = join(dir, 'tmp');
  const parent = join(dir, 'parent');
  mkdirSync(tmp);
  mkdirSync(parent);
  return { tmp, parent, socket: join(dir, 'p.sock'), env: { ...process.env, TMPDIR: tmp } };
}

/** Whatever the outcome, nothing a fixture started outlives the test. */
function killAfterTest(report: Pick<Report, 'groups' | 'pids'>): void {
  onTestFinished(() => {
    for (const group of report.groups) {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {}
    }
    for (const pid of report.pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
  });
}

/** Start the fixture in `mode` and read its report. */
async function startFixture<T>(
  mode: string,
  at: Layout,
): Promise<{ child: ChildProcess; exit: Promise<Exit>; report: T }> {
  const child = spawnTracked(process.execPath, [FIXTURE, mode, at.parent, at.socket], {
    env: at.env,
  });
  const exit = completion(child);
  const report = await firstJsonLine<T>(child);
  return { child, exit, report };
}

/** A new process whose first shimkit use is `createMockBinary` with the same parent. */
async function sweepInNewProcess(at: Layout): Promise<void> {
  const result = await runCommand(process.execPath, [FIXTURE, 'sweep', at.parent], {
    env: at.env,
  });
  expect(result.code, result.stderr.toString()).toBe(0);
}

async function expectAllDead(pids: number[]): Promise<void> {
  await vi.waitFor(
    () => {
      for (const pid of pids) expect(isAlive(pid), `pid ${pid}`).toBe(false);
    },
    { timeout: 5000, interval: 20 },
  );
}

function registries(at: Layout): string[] {
  return readdirSync(at.tmp).filter((name) => name.startsWith('shimkit-owner-'));
}

/** A process that certainly is gone: a child that ran, was recorded, and was reaped. */
async function goneOwner(): Promise<Owner> {
  const child = spawnTracked('sleep', ['1000']);
  const pid = child.pid as number;
  const start = readStat(pid)?.start as number;
  const exit = completion(child);
  child.kill('SIGKILL');
  await exit;
  return { pid, start, scope: realHost().scope };
}

/** A detached `sleep` (its own process group) and its start time; killed when the test ends. */
function detachedSleep(): { pid: number; start: number } {
  const child = spawnTracked('sleep', ['1000'], { detached: true, stdio: 'ignore' });
  const pid = child.pid as number;
  onTestFinished(() => {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {}
  });
  return { pid, start: readStat(pid)?.start as number };
}

/** Write `owner`'s registry in `dir` with `entries`, as a dead owner would have left it. */
function writeRegistry(dir: string, owner: Owner, entries: RegistryEntry[]): string {
  const registry = join(dir, registryName(owner));
  mkdirSync(registry);
  for (const [i, entry] of entries.entries()) {
    writeFileSync(join(registry, `${entry.type}-${i}`), JSON.stringify(entry));
  }
  return registry;
}

function makeRoot(parent: string, kind: string, owner: Owner, random = 'AbC123'): string {
  const root = join(parent, `${rootNameStem(kind, owner)}${random}`);
  mkdirSync(join(root, 'bin'), { recursive: true });
  return root;
}

// The sweep, the registry or another user work in the system temp dir itself:
// the leak sanitizer's per-test TMPDIR is off here (inSystemTmpdir).
describe('SP-11 leftovers of a test process that died without cleanup', inSystemTmpdir, () => {
  it('SP-11 a SIGKILLed owner of a mock, a sandbox with a running tree and a proxy: the next process’s first createMockBinary removes all of it', async () => {
    const at = layout();
    const { child, exit, report } = await startFixture<Report>('own', at);
    killAfterTest(report);
    expect(report.pids).toHaveLength(2); // the sandbox's child and its grandchild

    child.kill('SIGKILL'); // no exit hook can run
    expect((await exit).signal).toBe('SIGKILL');

    // Everything is left behind…
    for (const path of [report.mockRoot, report.sandboxRoot, report.socket]) {
      expect(existsSync(path), path).toBe(true);
    }
    for (const pid of report.pids) expect(isAlive(pid), `pid ${pid}`).toBe(true);
    expect(registries(at)).toHaveLength(1);

    await sweepInNewProcess(at);

    // …until the next process's first use of shimkit.
    await expectAllDead(report.pids);
    for (const path of [report.mockRoot, report.sandboxRoot, report.socket]) {
      expect(existsSync(path), path).toBe(false);
    }
    expect(registries(at)).toEqual([]);
    expect(readdirSync(at.parent)).toEqual([]);
  });

  it.each(['sandbox', 'run', 'proxy'])(
    'SP-11 the first use may be %s, and roots in a custom parent are swept through the registry even when that parent is not used again',
    async (api) => {
      const at = layout();
      const { child, exit, report } = await startFixture<Report>('own', at);
      killAfterTest(report);
      child.kill('SIGKILL');
      await exit;

      const other = { ...at, parent: testDir() }; // the new process never names the old parent
      const result = await runCommand(process.execPath, [FIXTURE, 'first-use', other.parent, api], {
        env: at.env,
      });
      expect(result.code, result.stderr.toString()).toBe(0);

      await expectAllDead(report.pids);
      for (const path of [report.mockRoot, report.sandboxRoot, report.socket]) {
        expect(existsSync(path), path).toBe(false);
      }
      expect(registries(at)).toEqual([]);
    },
  );

  it('SP-11 keep: true sandboxes and processes of a SIGKILLed owner are left for debugging', async () => {
    const at = layout();
    const { child, exit, report } = await startFixture<
      Pick<Report, 'sandboxRoot' | 'groups' | 'pids'>
    >('keep', at);
    killAfterTest(report);
    child.kill('SIGKILL');
    await exit;

    await sweepInNewProcess(at);

    expect(existsSync(report.sandboxRoot)).toBe(true);
    expect(existsSync(join(report.sandboxRoot, KEEP_MARKER))).toBe(true);
    for (const pid of report.pids) expect(isAlive(pid), `pid ${pid}`).toBe(true);
  });

  it('SP-11 nothing of a live owner is swept: a second process sweeps while the first still runs', async () => {
    const at = layout();
    const { child, report } = await startFixture<Report>('own', at);
    killAfterTest(report);

    await sweepInNewProcess(at);
    const clean = await runCommand(process.execPath, [FIXTURE, 'clean', at.parent], {
      env: at.env,
    });
    expect(clean.code, clean.stderr.toString()).toBe(0);

    expect(JSON.parse(clean.stdout.toString())).toEqual({
      removed: [],
      killed: [],
      sockets: [],
      failed: [],
    });
    for (const path of [report.mockRoot, report.sandboxRoot, report.socket]) {
      expect(existsSync(path), path).toBe(true);
    }
    for (const pid of report.pids) expect(isAlive(pid), `pid ${pid}`).toBe(true);
    expect(registries(at)).toHaveLength(1);
    child.kill('SIGKILL');
  });

  it('SP-11 a worker thread ended with worker.terminate() leaks its roots and tree; they are swept once its process has exited', async () => {
    const at = layout();
    const { exit, report } = await startFixture<Report>('worker', at);
    killAfterTest(report);
    expect((await exit).code).toBe(0); // the process exited normally, the worker never could clean up

    for (const path of [report.mockRoot, report.sandboxRoot]) {
      expect(existsSync(path), path).toBe(true);
    }
    for (const pid of report.pids) expect(isAlive(pid), `pid ${pid}`).toBe(true);

    await sweepInNewProcess(at);

    await expectAllDead(report.pids);
    for (const path of [report.mockRoot, report.sandboxRoot]) {
      expect(existsSync(path), path).toBe(false);
    }
    expect(readdirSync(at.tmp)).toEqual([]);
  });

  it('SP-11 on Linux a terminated worker’s roots and tree are swept even while its process lives, by that process’s next first use of shimkit', async () => {
    const at = layout();
    const { exit, report } = await startFixture<{
      report: Report;
      before: Record<string, boolean>;
      after: Record<string, boolean>;
    }>('worker-then-use', at);
    killAfterTest(report.report);
    expect((await exit).code).toBe(0);

    expect(report.before).toMatchObject({ mockRoot: true, sandboxRoot: true });
    expect(report.after).toEqual({ mockRoot: false, sandboxRoot: false, socket: false });
    await expectAllDead(report.report.pids);
  });

  it('SP-11 a root or registry whose recorded start time does not match the live process with that pid is swept (the pid was reused)', () => {
    const parent = testDir();
    const live = detachedSleep(); // a live pid…
    const reused: Owner = { pid: live.pid, start: live.start + 1, scope: realHost().scope };
    const itself: Owner = { ...reused, start: live.start };
    const stale = makeRoot(parent, 'sandbox', reused);
    const current = makeRoot(parent, 'sandbox', itself);
    // …and a process group of the stale owner whose leader is alive with its recorded start time.
    const group = detachedSleep();
    const registry = writeRegistry(parent, reused, [
      { type: 'group', pgid: group.pid, start: group.start },
    ]);

    const report = sweepDirs([parent]);

    expect(report).toEqual({ removed: [stale], killed: [group.pid], sockets: [], failed: [] });
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(registry)).toBe(false);
    expect(existsSync(current)).toBe(true); // the live owner's root stays
    expect(isAlive(live.pid)).toBe(true);
  });

  it('SP-11 a group whose leader pid now belongs to another process (another start time) is never killed', () => {
    const parent = testDir();
    const other = detachedSleep();
    writeRegistry(parent, { pid: 999_999, start: 1, scope: realHost().scope }, [
      { type: 'group', pgid: other.pid, start: other.start + 1 },
    ]);

    const report = sweepDirs([parent]);

    expect(report.killed).toEqual([]);
    expect(isAlive(other.pid)).toBe(true);
  });

  it('SP-11 the sweep of a custom parent works from the names alone, and leaves kept roots, live owners and foreign names', async () => {
    const at = layout();
    const dead = await goneOwner();
    const mock = makeRoot(at.parent, '', dead);
    const sandbox = makeRoot(at.parent, 'sandbox', dead, 'Zz9Zz9');
    const trash = makeRoot(at.parent, 'trash', dead, 'tr4shX');
    const kept = makeRoot(at.parent, 'sandbox', dead, 'Kept00');
    writeFileSync(join(kept, KEEP_MARKER), '');
    const mine = makeRoot(at.parent, 'sandbox', {
      pid: process.pid,
      start: readStat('self')?.start as number,
      scope: realHost().scope,
    });
    const foreign = ['shimkit-test-x', 'shimkit-1-2', `${rootNameStem('', dead)}short`, 'other'];
    for (const name of foreign) mkdirSync(join(at.parent, name));

    await sweepInNewProcess(at);

    for (const path of [mock, sandbox, trash]) expect(existsSync(path), path).toBe(false);
    for (const path of [kept, mine]) expect(existsSync(path), path).toBe(true);
    expect(readdirSync(at.parent).sort()).toEqual(
      [basename(kept), basename(mine), ...foreign].sort(),
    );
  });

  it('SP-11 a registry only removes roots that carry its own owner in their name, and only the socket file it recorded', async () => {
    const at = layout();
    const dead = await goneOwner();
    const other = await goneOwner();
    const precious = join(at.parent, 'precious');
    mkdirSync(precious);
    const othersRoot = makeRoot(at.parent, 'sandbox', other);
    const ownRoot = makeRoot(at.parent, 'sandbox', dead);
    const notASocket = join(at.parent, 'file.sock');
    writeFileSync(notASocket, 'x');
    writeRegistry(at.tmp, dead, [
      { type: 'dir', path: precious },
      { type: 'dir', path: othersRoot },
      { type: 'dir', path: ownRoot },
      { type: 'socket', path: notASocket, dev: '1', ino: '2' },
    ]);
    // othersRoot is a gone owner's too, but only a sweep of its parent may remove it: keep that out.
    const report = sweepDirs([at.tmp]);

    expect(report).toEqual({ removed: [ownRoot], killed: [], sockets: [], failed: [] });
    for (const path of [precious, othersRoot, notASocket])
      expect(existsSync(path), path).toBe(true);
    expect(readFileSync(notASocket, 'utf8')).toBe('x');
    expect(registries(at)).toEqual([]);
  });

  it('SP-11 two processes sweeping the same leftovers at once both succeed and remove everything once', async () => {
    const at = layout();
    const owners = await Promise.all([goneOwner(), goneOwner(), goneOwner()]);
    const roots = owners.flatMap((owner, i) =>
      ['', 'sandbox', 'trash'].map((kind) => makeRoot(at.parent, kind, owner, `Race0${i}`)),
    );
    for (const root of roots) {
      for (let i = 0; i < 50; i++) writeFileSync(join(root, 'bin', `f${i}`), 'x');
    }

    const results = await Promise.all(
      [1, 2, 3].map(() =>
        runCommand(process.execPath, [FIXTURE, 'clean', at.parent], { env: at.env }),
      ),
    );

    const reports = results.map((r) => {
      expect(r.code, r.stderr.toString()).toBe(0);
      return JSON.parse(r.stdout.toString());
    });
    for (const report of reports) expect(report.failed).toEqual([]);
    const removed = reports.flatMap((r) => r.removed).sort();
    expect(removed).toEqual([...roots].sort()); // each root once, by whichever got there first
    expect(readdirSync(at.parent)).toEqual([]);
  });
});

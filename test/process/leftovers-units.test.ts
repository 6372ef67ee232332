import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidOptionError, sweepLeftovers } from '../../src/index.js';
import { killLeftGroup } from '../../src/internal/leftovers/groups.js';
import { type Host, linuxScope, scopeHash } from '../../src/internal/leftovers/host.js';
import {
  kindOf,
  parseLeftoverName,
  registryName,
  rootNameStem,
} from '../../src/internal/leftovers/names.js';
import { type Owner, ownerGone } from '../../src/internal/leftovers/owner.js';
import { parseEntry } from '../../src/internal/leftovers/registry.js';
import { sweepDirs } from '../../src/internal/leftovers/sweep.js';
import { parseStat } from '../../src/internal/proc.js';
import { testDir } from '../helpers/index.js';

/*
 * The pure parts of SPEC SP-11 (names, registry entries, /proc parsing) and
 * each platform's branch of the owner check and the group kill, against a
 * fake machine, so the Windows and macOS rules are tested on Linux.
 */

interface FakeProc {
  state?: string;
  pgid?: number;
  start: number;
  threads?: Record<number, number>; // tid → start
}

type FakeHost = Host & { signals: [number, NodeJS.Signals | 0][]; procReads: string[] };

const SCOPE = 'k3j9x2';

/** A machine with the processes `procs` (pid → stat), on `platform`. */
function fakeHost(
  procs: Record<number, FakeProc>,
  options: Partial<Host> & { unreadable?: boolean; denied?: number[] } = {},
): FakeHost {
  const signals: [number, NodeJS.Signals | 0][] = [];
  const procReads: string[] = [];
  const statLine = (pid: number, p: FakeProc) =>
    `${pid} (a (weird) name) ${p.state ?? 'S'} 1 ${p.pgid ?? pid} ${Array(16).fill('0').join(' ')} ${p.start} 0 0`;
  const fail = (code: string) => Object.assign(new Error(code), { code });
  return {
    platform: 'linux',
    uid: undefined,
    scope: SCOPE,
    signals,
    procReads,
    kill(pid, signal) {
      signals.push([pid, signal]);
      if (options.denied?.includes(Math.abs(pid))) throw fail('EPERM');
      const found =
        pid > 0
          ? procs[pid] !== undefined
          : Object.entries(procs).some(([p, s]) => (s.pgid ?? Number(p)) === -pid);
      if (!found) throw fail('ESRCH');
    },
    readProc(path) {
      procReads.push(path);
      if (options.unreadable) return undefined;
      const m = /^\/proc\/(\d+)(?:\/task\/(\d+))?\/stat$/.exec(path);
      const proc = m ? procs[Number(m[1])] : undefined;
      if (!m || !proc) return null;
      if (m[2] === undefined) return statLine(Number(m[1]), proc);
      const start = proc.threads?.[Number(m[2])];
      return start === undefined ? null : statLine(Number(m[2]), { ...proc, start });
    },
    listProc: () => Object.keys(procs),
    ...options,
  };
}

const owner = (pid: number, start: number, extra: Partial<Owner> = {}): Owner => ({
  pid,
  start,
  scope: SCOPE,
  ...extra,
});

describe('SP-11 names that carry their owner', () => {
  it('SP-11 root and registry names round-trip, and nothing else parses', () => {
    const owners = fc.record({
      pid: fc.integer({ min: 1, max: 4_194_304 }),
      start: fc.nat(),
      scope: fc.stringMatching(/^[0-9a-z]{1,6}$/),
    });
    const random = fc.stringMatching(/^[A-Za-z0-9]{6}$/);
    fc.assert(
      fc.property(owners, fc.stringMatching(/^[a-z]{0,16}$/), random, (o, kind, r) => {
        const name = `${rootNameStem(kind === 'owner' ? '' : kind, o)}${r}`;
        expect(parseLeftoverName(name)).toEqual({
          type: 'root',
          kind: kind === 'owner' ? '' : kind,
          owner: o,
        });
      }),
    );
    fc.assert(
      fc.property(
        owners,
        fc.option(fc.record({ tid: fc.integer({ min: 1 }), start: fc.nat() })),
        (o, thread) => {
          const withThread = thread ? { ...o, thread } : o;
          expect(parseLeftoverName(registryName(withThread))).toEqual({
            type: 'registry',
            owner: withThread,
          });
        },
      ),
    );
    // Any string either is not a leftover name, or is exactly the name its parse gives back.
    fc.assert(
      fc.property(fc.string(), fc.stringMatching(/^shimkit-[a-z0-9A-Z-]{0,40}$/), (a, b) => {
        for (const name of [a, b]) {
          const parsed = parseLeftoverName(name);
          if (!parsed) continue;
          const again =
            parsed.type === 'registry'
              ? registryName(parsed.owner)
              : `${rootNameStem(parsed.kind, parsed.owner)}${name.slice(-6)}`;
          expect(again).toBe(name);
        }
      }),
    );
  });

  it('SP-11 garbage, old-style and foreign names are not leftovers', () => {
    for (const name of [
      '',
      'shimkit',
      'shimkit-',
      'shimkit-12345-abcdefghijkl', // tmp's own naming, no start time
      'shimkit-sandbox--12345-abcdefghijkl',
      'shimkit-test-AbC123',
      'shimkit-0-5-abc-AbC123', // pid 0
      'shimkit-01-5-abc-AbC123', // not canonical
      'shimkit-1-5-ABC-AbC123', // scope is lower case
      'shimkit-1-5-abc-AbC12', // random too short
      'shimkit-1-5-abc-AbC1234',
      'shimkit-Sandbox-1-5-abc-AbC123',
      'shimkit-a-b-1-5-abc-AbC123',
      'shimkit-owner-1-5',
      'shimkit-owner-1-5-abc-7',
      'shimkit-owner-1-5-abc-0-9', // tid 0
      'shimkit-1-99999999999999999-abc-AbC123', // beyond a safe integer
      '.trash-1-abc',
    ]) {
      expect(parseLeftoverName(name), name).toBeUndefined();
    }
    expect(parseLeftoverName('shimkit-sandbox-42-981234-k3j9x2-Ab3dE9')).toEqual({
      type: 'root',
      kind: 'sandbox',
      owner: { pid: 42, start: 981234, scope: 'k3j9x2' },
    });
  });

  it('SP-11 the kind comes from the createTempDir prefix', () => {
    expect(kindOf('shimkit')).toBe('');
    expect(kindOf('shimkit-sandbox-')).toBe('sandbox');
    expect(kindOf('shimkit-owner-')).toBe('dir'); // never mistaken for a registry
    expect(kindOf('My Thing 2')).toBe('mything');
    expect(rootNameStem('sandbox', owner(42, 7))).toBe(`shimkit-sandbox-42-7-${SCOPE}-`);
  });

  it('SP-11 registry entries are checked; garbage is not an entry', () => {
    expect(parseEntry({ type: 'group', pgid: 5, start: 9 })).toEqual({
      type: 'group',
      pgid: 5,
      start: 9,
    });
    expect(parseEntry({ type: 'socket', path: '/t/p.sock', dev: '1', ino: '2' })).toMatchObject({
      type: 'socket',
    });
    expect(parseEntry({ type: 'dir', path: '/t/x' })).toEqual({ type: 'dir', path: '/t/x' });
    for (const garbage of [
      null,
      'group',
      [],
      { type: 'group', pgid: -1, start: 0 },
      { type: 'group', pgid: 1.5, start: 0 },
      { type: 'socket', path: '/p', dev: 'x', ino: '2' },
      { type: 'dir', path: '' },
      { type: 'dir', path: 'a\0b' },
      { type: 'file', path: '/x' },
    ]) {
      expect(parseEntry(garbage), JSON.stringify(garbage)).toBeUndefined();
    }
  });

  it('SP-11 /proc/<pid>/stat is read after the last parenthesis (field 22 is the start time)', () => {
    const line = `77 (sh) x) (y) S 1 77 78 0 -1 4194560 ${Array(12).fill('0').join(' ')} 123456 0 0`;
    expect(parseStat(line)).toEqual({ state: 'S', ppid: 1, pgid: 77, sid: 78, start: 123456 });
    expect(parseStat('garbage')).toBeUndefined();
    expect(scopeHash('a')).toMatch(/^[0-9a-z]{6}$/);
    expect(scopeHash('a')).toBe(scopeHash('a'));
    expect(scopeHash('a')).not.toBe(scopeHash('b'));
    expect(linuxScope(() => null)).toMatch(/^[0-9a-z]{1,6}$/); // the pid namespace alone
  });
});

describe('SP-11 is the owner gone?', () => {
  const alive = { 100: { start: 5000, threads: { 100: 5000, 101: 5005 } } };

  it('SP-11 Linux: a dead pid, a zombie, or the pid with another start time is gone', () => {
    expect(ownerGone(owner(100, 5000), fakeHost(alive))).toBe(false);
    expect(ownerGone(owner(200, 5000), fakeHost(alive))).toBe(true);
    expect(ownerGone(owner(100, 4999), fakeHost(alive))).toBe(true); // pid reused
    expect(ownerGone(owner(100, 5000), fakeHost({ 100: { start: 5000, state: 'Z' } }))).toBe(true);
    expect(ownerGone(owner(100, 5000), fakeHost({ 100: { start: 5000, state: 'X' } }))).toBe(true);
  });

  it('SP-11 Linux: a worker thread is gone when its process lives without it', () => {
    const t = (tid: number, start: number) => owner(100, 5000, { thread: { tid, start } });
    expect(ownerGone(t(101, 5005), fakeHost(alive))).toBe(false);
    expect(ownerGone(t(102, 5005), fakeHost(alive))).toBe(true); // terminated
    expect(ownerGone(t(101, 6000), fakeHost(alive))).toBe(true); // tid reused
  });

  it('SP-11 in doubt the owner is kept: another scope, no start time, /proc unreadable, EPERM, a bad pid', () => {
    expect(ownerGone({ ...owner(200, 1), scope: 'zzzzzz' }, fakeHost(alive))).toBe(false);
    expect(ownerGone(owner(100, 0), fakeHost(alive))).toBe(false);
    expect(ownerGone(owner(100, 4999), fakeHost(alive, { unreadable: true }))).toBe(false);
    const denied = fakeHost({}, { denied: [300] });
    expect(ownerGone(owner(300, 1), denied)).toBe(false); // another user's live process
    for (const pid of [0, -5, 1.5, Number.NaN]) {
      const host = fakeHost(alive);
      expect(ownerGone(owner(pid, 1), host)).toBe(false);
      expect(host.signals).toEqual([]); // kill(0) or kill(-n) would mean process groups
    }
  });

  it('SP-11 Windows and macOS: the pid alone decides, and /proc is never read', () => {
    for (const platform of ['win32', 'darwin'] as const) {
      const host = fakeHost(alive, { platform });
      expect(ownerGone(owner(100, 4999), host)).toBe(false); // alive: start times cannot be compared
      expect(ownerGone(owner(200, 4999), host)).toBe(true);
      expect(host.procReads).toEqual([]);
    }
  });
});

describe('SP-11 which process groups a gone owner left are killed', () => {
  const group = (pgid: number, start: number) => ({ pgid, start });
  const kills = (host: FakeHost) => host.signals.filter(([, s]) => s === 'SIGKILL');

  it('SP-11 Linux: the leader with its recorded start time, or members that outlived the leader', () => {
    const leaderAlive = fakeHost({ 50: { start: 700 }, 51: { start: 701, pgid: 50 } });
    expect(killLeftGroup(group(50, 700), leaderAlive)).toBe(true);
    expect(kills(leaderAlive)).toEqual([[-50, 'SIGKILL']]);

    const orphans = fakeHost({ 51: { start: 701, pgid: 50 } });
    expect(killLeftGroup(group(50, 700), orphans)).toBe(true);
    expect(kills(orphans)).toEqual([[-50, 'SIGKILL']]);

    const zombieLeader = fakeHost({ 50: { start: 700, state: 'Z' }, 51: { start: 701, pgid: 50 } });
    expect(killLeftGroup(group(50, 700), zombieLeader)).toBe(true);

    const moved = fakeHost({ 50: { start: 700, pgid: 60 } }); // the leader left its group
    expect(killLeftGroup(group(50, 700), moved)).toBe(true);
    expect(kills(moved)).toEqual([
      [-50, 'SIGKILL'],
      [50, 'SIGKILL'],
    ]);
  });

  it('SP-11 Linux: a reused leader pid, a group with only zombies left, or unreadable /proc is not killed', () => {
    for (const host of [
      fakeHost({ 50: { start: 999 } }), // another process has the pid now
      fakeHost({ 51: { start: 701, pgid: 50, state: 'Z' } }),
      fakeHost({}),
      fakeHost({ 50: { start: 700 } }, { unreadable: true }),
    ]) {
      expect(killLeftGroup(group(50, 700), host)).toBe(false);
      expect(kills(host)).toEqual([]);
    }
    const host = fakeHost({ 1: { start: 1 } });
    expect(killLeftGroup(group(1, 1), host)).toBe(false); // never init's group
    expect(killLeftGroup(group(0, 1), host)).toBe(false);
  });

  it('SP-11 macOS: only a group that outlived its leader (no start time to tell a reused pid)', () => {
    const leaderAlive = fakeHost({ 50: { start: 0 } }, { platform: 'darwin' });
    expect(killLeftGroup(group(50, 0), leaderAlive)).toBe(false);
    const orphans = fakeHost({ 51: { start: 0, pgid: 50 } }, { platform: 'darwin' });
    expect(killLeftGroup(group(50, 0), orphans)).toBe(true);
    expect(kills(orphans)).toEqual([[-50, 'SIGKILL']]);
    expect(orphans.procReads).toEqual([]);
  });

  it('SP-11 Windows: no process group is ever signalled', () => {
    const host = fakeHost(
      { 50: { start: 700 }, 51: { start: 1, pgid: 50 } },
      { platform: 'win32' },
    );
    expect(killLeftGroup(group(50, 700), host)).toBe(false);
    expect(killLeftGroup(group(70, 700), host)).toBe(false);
    expect(host.signals).toEqual([]);
  });
});

describe('SP-11 the sweep on other platforms and for other users', () => {
  function leftovers(parent: string, dead: Owner) {
    const root = join(parent, `${rootNameStem('sandbox', dead)}AbC123`);
    mkdirSync(root);
    const registry = join(parent, registryName(dead));
    mkdirSync(registry);
    writeFileSync(join(registry, 'group-1'), JSON.stringify({ type: 'group', pgid: 77, start: 0 }));
    writeFileSync(join(registry, 'group-2'), 'not json');
    return { root, registry };
  }

  it('SP-11 Windows: a gone owner’s dirs and registry are removed; its groups are not signalled', () => {
    const parent = testDir();
    const { root, registry } = leftovers(parent, { pid: 4242, start: 0, scope: '0' });
    const host = fakeHost({ 77: { start: 0 } }, { platform: 'win32', scope: '0' });

    const report = sweepDirs([parent], host);

    expect(report).toEqual({ removed: [root], killed: [], sockets: [], failed: [] });
    expect(existsSync(registry)).toBe(false);
    expect(host.signals).toEqual([[4242, 0]]); // one liveness probe, no kill
    expect(host.procReads).toEqual([]);
  });

  it('SP-11 another user’s leftovers are left alone', () => {
    const parent = testDir();
    const { root, registry } = leftovers(parent, owner(4242, 5));
    const host = fakeHost({}, { uid: (process.getuid?.() ?? 0) + 1 });

    expect(sweepDirs([parent], host)).toEqual({ removed: [], killed: [], sockets: [], failed: [] });
    expect(existsSync(root)).toBe(true);
    expect(existsSync(registry)).toBe(true);
  });

  it('SP-11 sweepLeftovers() checks its options', () => {
    expect(() => sweepLeftovers({ dirs: ['relative/dir'] })).toThrow(InvalidOptionError);
    expect(() => sweepLeftovers({ dirs: 'tmp' as never })).toThrow(
      'Expected the `dirs` option of sweepLeftovers() to be an array of absolute dir paths, got "tmp" (string).',
    );
    expect(() => sweepLeftovers({ dir: [] } as never)).toThrow(
      'Unknown option `dir` for sweepLeftovers(). Did you mean `dirs`? Valid options: dirs.',
    );
  });
});

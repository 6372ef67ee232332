import { readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { PtyUnavailableError } from '../../../src/index.js';
import { killSession } from '../../../src/process/kill.js';
import { resolveSpawn } from '../../../src/process/options.js';
import { keyBytes } from '../../../src/process/pty/keys.js';
import { findPython, resolvePty } from '../../../src/process/pty/options.js';
import { testDir } from '../../helpers/index.js';

const where = 'spawnProcess("tui")';
const probe = (platform: NodeJS.Platform, files: string[], PATH = '') => ({
  platform,
  hostEnv: { PATH },
  exists: (file: string) => files.includes(file),
});

describe('SP-13 key names', () => {
  it('SP-13 names map to the bytes an xterm sends, case-insensitively; cursor keys follow DECCKM', () => {
    const cases: [string, string, string][] = [
      ['Enter', '\r', '\r'],
      ['tab', '\t', '\t'],
      ['Shift+Tab', '\x1b[Z', '\x1b[Z'],
      ['Backspace', '\x7f', '\x7f'],
      ['Escape', '\x1b', '\x1b'],
      ['Space', ' ', ' '],
      ['Up', '\x1b[A', '\x1bOA'],
      ['DOWN', '\x1b[B', '\x1bOB'],
      ['Right', '\x1b[C', '\x1bOC'],
      ['Left', '\x1b[D', '\x1bOD'],
      ['Home', '\x1b[H', '\x1bOH'],
      ['End', '\x1b[F', '\x1bOF'],
      ['PageUp', '\x1b[5~', '\x1b[5~'],
      ['Delete', '\x1b[3~', '\x1b[3~'],
      ['F1', '\x1bOP', '\x1bOP'],
      ['F12', '\x1b[24~', '\x1b[24~'],
      ['Ctrl+C', '\x03', '\x03'],
      ['ctrl+d', '\x04', '\x04'],
      ['Ctrl+Z', '\x1a', '\x1a'],
      ['Ctrl+[', '\x1b', '\x1b'],
      ['Ctrl+\\', '\x1c', '\x1c'],
      ['Ctrl+@', '\x00', '\x00'],
      ['Alt+x', '\x1bx', '\x1bx'],
      ['Alt+Up', '\x1b\x1b[A', '\x1b\x1bOA'],
      ['q', 'q', 'q'],
      ['é', 'é', 'é'],
    ];
    for (const [name, normal, application] of cases) {
      expect([name, keyBytes(name, false, 'press()')]).toEqual([name, normal]);
      expect([name, keyBytes(name, true, 'press()')]).toEqual([name, application]);
    }
  });

  it('SP-13 an unknown name is refused with the nearest one and the list', () => {
    expect(() => keyBytes('Entr', false, 'p.press()')).toThrow(
      /p\.press\(\) does not know the key "Entr"\. Did you mean "enter"\? Known keys: Enter, Tab,.*use type\(\)\./,
    );
    expect(() => keyBytes('Ctrl+1', false, 'p.press()')).toThrow(/does not know the key "Ctrl\+1"/);
    expect(() => keyBytes('', false, 'p.press()')).toThrow(/key name such as "Enter"/);
  });
});

describe('SP-13 backend and size', () => {
  it('SP-13 sizes default to 80×24 and are checked', () => {
    const linux = probe('linux', ['/usr/bin/python3']);
    expect(resolvePty(true, where, linux)).toEqual({
      cols: 80,
      rows: 24,
      backend: 'python',
      python: '/usr/bin/python3',
    });
    expect(resolvePty({ cols: 132 }, where, linux)).toMatchObject({ cols: 132, rows: 24 });
    expect(() => resolvePty({ rows: 1.5 }, where, linux)).toThrow(
      'Expected the `pty.rows` option of spawnProcess("tui") to be an integer from 1 to 1000, got 1.5 (number).',
    );
    expect(() => resolvePty(null, where, linux)).toThrow(
      /to be true or \{ cols, rows \}, got null/,
    );
  });

  it('SP-13 python3 is taken from a fixed system path before the PATH (a pyenv shim or a mock named python3 never runs the helper)', () => {
    expect(findPython(probe('linux', ['/usr/local/bin/python3', '/usr/bin/python3']))).toBe(
      '/usr/bin/python3',
    );
    expect(findPython(probe('darwin', ['/opt/homebrew/bin/python3']))).toBe(
      '/opt/homebrew/bin/python3',
    );
    // Only the PATH has one (found there by the real lookup: python3 of this machine's PATH).
    const hostPath = process.env.PATH ?? '';
    expect(findPython(probe('linux', [], hostPath))).toMatch(/\/python3$/);
    expect(findPython(probe('linux', [], ''))).toBeUndefined();
  });

  it('SP-13 no backend: a clear PtyUnavailableError on Windows and without python3', () => {
    expect(() => resolvePty(true, where, probe('win32', []))).toThrow(PtyUnavailableError);
    expect(() => resolvePty(true, where, probe('win32', []))).toThrow(
      /cannot run on a pseudo-terminal on Windows: .* a ConPTY backend is not built yet\. Spawn it without `pty` on Windows/,
    );
    expect(() => resolvePty(true, where, probe('linux', []))).toThrow(
      /needs python3, and none was found \(looked in \/usr\/bin, \/usr\/local\/bin, \/opt\/homebrew\/bin and the PATH\)\. Install python3: /,
    );
    // Through spawnProcess's own option check, with the platform injected.
    expect(() =>
      resolveSpawn('sh', [], { pty: true }, 'spawnProcess', 'linux', { PATH: '' }, () => false),
    ).toThrow(PtyUnavailableError);
  });

  it('SP-13 without python3 (a PATH without it, no system one) the error says what to install on each family of images', () => {
    const bin = testDir();
    symlinkSync('/bin/sh', join(bin, 'sh'));
    const error = (() => {
      try {
        resolveSpawn('sh', [], { pty: true }, 'spawnProcess', 'linux', { PATH: bin }, () => false);
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error).toBeInstanceOf(PtyUnavailableError);
    expect(error?.message).toBe(
      'spawnProcess("sh") cannot run on a pseudo-terminal here: the PTY backend needs python3, and none was found (looked in /usr/bin, /usr/local/bin, /opt/homebrew/bin and the PATH). Install python3: `apt-get install -y --no-install-recommends python3` on Debian and Ubuntu (node:*-slim images; python3-minimal alone lacks its termios module), `apk add python3` on Alpine, `dnf install -y python3` on Fedora and RHEL.',
    );
  });

  it('SP-13 TERM is xterm-256color on a PTY unless env sets it; pipes keep the env as it was', () => {
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'dumb' };
    const at = (options: Parameters<typeof resolveSpawn>[2]) =>
      resolveSpawn('sh', [], { ...options }, 'spawnProcess', 'linux', env).env.TERM;
    expect(at({ pty: true })).toBe('xterm-256color');
    expect(at({ pty: true, env: { TERM: 'vt100' } })).toBe('vt100');
    expect(at({ pty: false })).toBe(process.env.TERM);
  });
});

describe("SP-13 the session kill refuses what is not a PTY helper's session", () => {
  it("SP-13 pid 0, pid 1, this process's own session and a reused leader pid signal nothing", () => {
    // process.kill is replaced for the test: were a guard broken, nothing real is signalled.
    const kill = vi.spyOn(process, 'kill').mockImplementation(() => true);
    onTestFinished(() => kill.mockRestore());
    const ownSid = Number(readFileSync('/proc/self/stat', 'latin1').split(') ')[1]?.split(' ')[3]);
    expect(killSession(0, 0)).toBe(0);
    expect(killSession(1, 0)).toBe(0);
    if (process.platform === 'linux') {
      expect(killSession(ownSid, 0)).toBe(0);
      // A process runs with that number, started at another time: the number was reused.
      expect(killSession(process.ppid, 1)).toBe(0);
    }
    expect(kill).not.toHaveBeenCalled();
  });
});

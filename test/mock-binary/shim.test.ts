import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMockBinary, createMockBinDir } from '../../src/index.js';
import { runnerPath } from '../../src/internal/package-files.js';
import { RUNNER_FLAGS, runnerFlags } from '../../src/mock-binary/runner-flags.js';
import { cmdQuote, renderWindowsShim, shimFileName, shQuote } from '../../src/mock-binary/shim.js';
import { cmdReadable, RUNNER_FILES, WindowsFiles } from '../../src/mock-binary/windows-layout.js';
import { runCommand, testDir } from '../helpers/index.js';
import { generationDir } from '../helpers/protocol.js';

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('the POSIX shim', () => {
  it('MB-01 is an executable sh script (0700) that runs the runner with the absolute path of the creating Node', async () => {
    await using git = createMockBinary('git', { responses: [{ stdout: 'ok\n' }] });
    const text = readFileSync(git.path, 'utf8');
    expect(text.startsWith('#!/bin/sh\n')).toBe(true);
    expect(text).toContain(`shimkit_state=${shQuote(git.stateDir)} shimkit_resumed=\n`);
    expect(text.trimEnd()).toMatch(
      new RegExp(
        `\nexec ${escapeRegExp(`${shQuote(process.execPath)} ${RUNNER_FLAGS.join(' ')} ${shQuote(runnerPath())} \${shimkit_resumed:+"$shimkit_resumed"} "$shimkit_state" "$@"`)}$`,
      ),
    );
    expect(statSync(git.path).mode & 0o777).toBe(0o700);
    expect(git.path).toBe(join(git.dir, 'git'));
  });

  it('MB-01 works when PATH holds the shim dir alone (no node on PATH)', async () => {
    await using git = createMockBinary('git', { responses: [{ stdout: 'alone\n' }] });
    const result = await runCommand('git', ['status'], { env: { PATH: git.dir } });
    expect(result.stderr.toString()).toBe('');
    expect(result.stdout.toString()).toBe('alone\n');
    expect(result.code).toBe(0);
  });

  it('MB-01 moves NODE_OPTIONS aside for the runner and records it as the caller set it', async () => {
    const dir = testDir();
    const bomb = join(dir, 'bomb.cjs');
    writeFileSync(bomb, 'process.stderr.write("preloaded\\n"); process.exit(99);\n');
    await using git = createMockBinary('git', {
      recordEnv: ['NODE_OPTIONS'],
      responses: [{ stdout: 'fine\n' }],
    });
    const result = await runCommand('git', [], {
      env: git.env({ ...process.env, NODE_OPTIONS: `--require ${bomb}` }),
    });
    expect(result.stderr.toString()).toBe('');
    expect(result.code).toBe(0);
    expect(git.lastCall()?.env).toEqual({ NODE_OPTIONS: `--require ${bomb}` });
  });

  it('MB-01 the runner gets JIT and background threads off, only from a Node that takes the flags cleanly', () => {
    expect(runnerFlags(process.execPath, process.platform, 'test')).toEqual(RUNNER_FLAGS);
    const dir = testDir();
    const script = (name: string, body: string) => {
      const file = join(dir, name);
      writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o700 });
      return file;
    };
    // One that refuses a flag, and one that warns about it: no flags, but they run the mocks.
    const refusing = script(
      'old-node',
      `case "$1" in --jitless) echo "bad option: $1" >&2; exit 9;; esac; exec '${process.execPath}' "$@"`,
    );
    expect(runnerFlags(refusing, process.platform, 'test')).toEqual([]);
    const noisy = script(
      'noisy-node',
      `case "$1" in --jitless) echo "Warning: disabling a flag" >&2;; esac; exec '${process.execPath}' "$@"`,
    );
    expect(runnerFlags(noisy, process.platform, 'test')).toEqual([]);
    // A shim for another platform is not probed.
    expect(runnerFlags('C:\\node\\node.exe', 'win32', 'test')).toEqual([]);
  });

  it('MB-01 a nodePath that cannot run is refused when the mock is made, not at every call', () => {
    const parent = testDir();
    const missing = join(parent, 'no-such-node');
    expect(() => createMockBinary('git', { nodePath: missing, tmpDir: parent })).toThrow(
      `The \`nodePath\` option of createMockBinary("git") must be a Node that runs: ${JSON.stringify(missing)} cannot be started (ENOENT).`,
    );
    const broken = join(parent, 'broken-node');
    writeFileSync(broken, '#!/bin/sh\necho "not node" >&2; exit 3\n', { mode: 0o700 });
    expect(() => createMockBinary('git', { nodePath: broken, tmpDir: parent })).toThrow(
      /must be a Node that runs: ".*broken-node" exited with 3 for `-e 0`: not node\./,
    );
    expect(readdirSync(parent)).toEqual(['broken-node']);
  });

  const installed = (shell: string) => spawnSync('sh', ['-c', `command -v ${shell}`]).status === 0;
  const shells: Array<[string, string[]]> = [
    ['dash', ['dash']],
    ['bash --posix', ['bash', '--posix']],
    ['busybox sh', ['busybox', 'sh']],
  ];
  for (const [label, [shell]] of shells) {
    if (!installed(shell as string))
      console.warn(`SKIPPED: the shim under ${label} (${shell} is not installed)`);
  }
  it.each(shells.filter(([, [shell]]) => installed(shell as string)))(
    'MB-01 the shim runs under %s',
    async (_label, command) => {
      await using git = createMockBinary('git', {
        recordEnv: ['NODE_DEBUG'],
        responses: [{ stdout: 'a\n' }, { stdout: 'b\n' }],
      });
      const [shell, ...flags] = command as [string, ...string[]];
      const plain = await runCommand(shell, [...flags, git.path, 'x y', '']);
      expect([plain.code, plain.stdout.toString(), plain.stderr.toString()]).toEqual([
        0,
        'a\n',
        '',
      ]);
      const moved = await runCommand(shell, [...flags, git.path], {
        env: { ...process.env, NODE_DEBUG: 'fs,module' },
      });
      expect([moved.code, moved.stdout.toString(), moved.stderr.toString()]).toEqual([
        0,
        'b\n',
        '',
      ]);
      expect(git.calls().map((c) => [c.argv, c.env])).toEqual([
        [['x y', ''], {}],
        [[], { NODE_DEBUG: 'fs,module' }],
      ]);
    },
  );

  it('MB-01 quotes paths with spaces, quotes and dollars for sh', async () => {
    const parent = join(testDir(), `it's a "dir" with $HOME and \`ticks\``);
    const { mkdirSync } = await import('node:fs');
    mkdirSync(parent);
    await using git = createMockBinary('git', {
      tmpDir: parent,
      responses: [{ stdout: 'quoted\n' }],
    });
    const result = await runCommand(git.path, ['x']);
    expect(result.stdout.toString()).toBe('quoted\n');
  });
});

describe('the Windows shim, rendered on any platform', () => {
  const root = join('C:', 'Users', 'Jürgen 日本', 'AppData', 'Local', 'Temp', 'shimkit-1');
  const target = {
    name: 'git',
    nodeFlags: [],
    nodePath: 'C:\\Program Files\\100% node\\node.exe',
    runnerPath: join(root, 'runner', 'runner.cjs'),
    stateDir: join(root, 'state', 'git.1a'),
    shimDir: join(root, 'node_modules', '.bin'),
    root,
  };

  it('MB-01 PX-14 the runner copied for Windows shims is every runner bundle the build makes (runner-proxy.cjs was missing: a faulted passthrough failed)', () => {
    const built = readdirSync(join(import.meta.dirname, '../../dist')).filter((f) =>
      /^runner.*\.cjs$/.test(f),
    );
    expect([...RUNNER_FILES].sort()).toEqual(built.sort());
    const root = testDir();
    const runner = new WindowsFiles(root).runner();
    expect(readdirSync(join(root, 'runner')).sort()).toEqual(built.sort());
    expect(runner).toBe(join(root, 'runner', 'runner.cjs'));
  });

  it('MB-01 is a .cmd file that runs node, the runner and the state named from %~dp0, passing %* through', () => {
    const text = renderWindowsShim(target);
    const lines = text.split('\r\n');
    expect(text.includes('\n') && !/[^\r]\n/.test(text)).toBe(true); // CRLF only
    expect(cmdReadable(text.replaceAll('\r\n', ''))).toBe(true); // cmd.exe reads it in the OEM code page
    expect(lines[0]).toBe('@echo off');
    expect(lines).toContain('setlocal DisableDelayedExpansion');
    expect(lines).toContain(
      '"C:\\Program Files\\100%% node\\node.exe" "%~dp0..\\..\\runner\\runner.cjs" "%~dp0..\\..\\state\\git.1a" %*',
    );
    expect(lines).toContain('exit /b %ERRORLEVEL%');
  });

  it('MB-17 refuses a path outside the temp dir that cmd.exe could not read', () => {
    expect(() => renderWindowsShim({ ...target, nodePath: 'C:\\Users\\Jürgen\\node.exe' })).toThrow(
      /cannot name C:.*Jürgen.*printable ASCII/,
    );
  });

  it('MB-17 escapes only % in paths and refuses a path containing a double quote', () => {
    expect(cmdQuote('C:\\a & b ^ (c) !d!')).toBe('"C:\\a & b ^ (c) !d!"');
    expect(cmdQuote('C:\\50%')).toBe('"C:\\50%%"');
    expect(() => cmdQuote('C:\\a"b')).toThrow(/double quote/);
  });

  it('MB-01 names the shim <name>.cmd for win32 and <name> elsewhere', () => {
    expect(shimFileName('git', 'win32')).toBe('git.cmd');
    expect(shimFileName('tool.CMD', 'win32')).toBe('tool.CMD');
    expect(shimFileName('git', 'linux')).toBe('git');
    expect(shimFileName('git', 'darwin')).toBe('git');
  });

  it('MB-01 createMockBinary({ platform: "win32" }) writes the .cmd shim under node_modules/.bin, with the runner copied beside it', async () => {
    await using git = createMockBinary('git', {
      platform: 'win32',
      nodePath: 'C:\\node\\node.exe',
    });
    expect(git.path).toBe(join(git.dir, 'git.cmd'));
    // cross-spawn escapes a .cmd's arguments twice only under node_modules/.bin (as for npm's shims).
    expect(git.dir.endsWith(join('node_modules', '.bin'))).toBe(true);
    const text = readFileSync(git.path, 'utf8');
    const root = join(git.dir, '..', '..');
    expect(text).toContain(`"C:\\node\\node.exe" "${join(root, 'runner', 'runner.cjs')}" `);
    expect(text).toContain(' %*\r\n');
    expect(readFileSync(join(root, 'runner', 'runner.cjs'))).toEqual(
      readFileSync('dist/runner.cjs'),
    );
    expect(existsSync(join(root, 'runner', 'runner-cold.cjs'))).toBe(true);
  });

  it('MB-17 a Node whose path is not printable ASCII is linked into the temp dir and named from %~dp0', async () => {
    const dir = join(testDir(), 'Jürgen 日本');
    mkdirSync(dir);
    const node = join(dir, 'node.exe');
    writeFileSync(node, 'not really node');
    await using bin = createMockBinDir({ platform: 'win32', tmpDir: dir }); // not ASCII: named from %~dp0
    const git = bin.mock('git', { nodePath: node });
    const gh = bin.mock('gh', { nodePath: node });
    const text = readFileSync(git.path, 'utf8');
    expect(text).toContain('"%~dp0..\\..\\node\\1\\node.exe" ');
    expect(readFileSync(gh.path, 'utf8')).toContain('"%~dp0..\\..\\node\\1\\node.exe" '); // once per bin dir
    expect(readFileSync(join(bin.root, 'node', '1', 'node.exe'), 'utf8')).toBe('not really node');
  });
});

describe('the path a call takes', () => {
  const responses = (n: number) => Array.from({ length: n }, (_, i) => ({ stdout: `r${i + 1}\n` }));
  it('PERF-07 the suite runs on the path it names: a plain call is served by the shell unless SHIMKIT_FAST_PATH=0 (the runner-only project)', async () => {
    await using git = createMockBinary('git', { responses: responses(1) });
    expect((await runCommand(git.path)).stdout.toString()).toBe('r1\n');
    expect(
      readFileSync(join(generationDir(git), 'calls', '1.json'), 'latin1').startsWith('{"sh":1,'),
    ).toBe(process.env.SHIMKIT_FAST_PATH !== '0');
    await using off = createMockBinary('git', { responses: responses(1), fastPath: false });
    expect(readFileSync(off.path, 'utf8')).not.toContain('shimkit_ln=');
    await using win = createMockBinary('git', { platform: 'win32', responses: responses(1) });
    expect(readFileSync(join(win.stateDir, 'state.json'), 'utf8')).not.toContain('"sh"');
  });
});

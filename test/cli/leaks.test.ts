import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { readmeBlocks } from '../../scripts/readme-snippets.mjs';
import { runWithLeakCheck } from '../../src/cli/leaks.js';
import type { LeakedProcess } from '../../src/index.js';
import { completion, isAlive, python3, spawnTracked, testDir } from '../helpers/index.js';
import { CLI, shimkit } from './helpers.js';

const linux = process.platform === 'linux';

/**
 * A pid file the command under test writes its leaked process's pid to; the
 * pid is SIGKILLed when the test finishes, should `shimkit leaks` not have.
 */
function pidFile(): { path: string; pid: () => number } {
  const path = join(testDir(), 'leaked.pid');
  const pid = () => Number(readFileSync(path, 'utf8').trim());
  onTestFinished(() => {
    if (!existsSync(path)) return;
    try {
      process.kill(pid(), 'SIGKILL');
    } catch {
      // gone, as it should be
    }
  });
  return { path, pid };
}

/**
 * sh that leaves `sleep 600` behind by a double fork, in its own session, and
 * exits `code`: `(setsid sleep 600 &) ; exit 0`, with the pid written to
 * `file` and a wait until setsid has exec'd the sleep binary (else the scan may find it
 * still named setsid).
 */
const doubleFork = (file: string, code: number) => [
  'sh',
  '-c',
  `(setsid sleep 600 & p=$!; echo $p >"$1"; i=0; until { read c </proc/$p/comm && [ "$c" = sleep ]; } || [ $i -ge 100000 ]; do i=$((i+1)); done) ; exit ${code}`,
  'sh',
  file,
];

interface Record {
  type: string;
  command: string[];
  cookie: string;
  exitCode: number | null;
  signal: string | null;
  scanned: boolean;
  processes: LeakedProcess[];
  killed: number[];
  remaining: number[];
  exit: number;
}

const records = (path: string): Record[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));

describe.runIf(linux)('shimkit leaks -- CMD (Linux /proc)', () => {
  it('LK-07 a command that leaves sleep 600 behind by a double fork: reported with its argv, killed, exit 1', async () => {
    const leaked = pidFile();
    const r = await shimkit(['leaks', '--', ...doubleFork(leaked.path, 0)]);
    const pid = leaked.pid();
    const stderr = r.stderr.toString();
    expect(stderr).toMatch(
      /^shimkit leaks: 1 process outlived sh -c '\(setsid sleep 600 & p=\$!; .*\) ; exit 0' sh \S+ \(killed\):\n/,
    );
    expect(stderr).toMatch(new RegExp(`^  sleep 600 \\(pid ${pid}\\) ← .*\\[cwd /`, 'm'));
    expect(stderr).toMatch(
      /\nshimkit leaks: exit 1, though the command exited 0 \(--warn keeps its exit code\)\.\n$/,
    );
    expect(r.stdout.toString()).toBe('');
    expect(r.code).toBe(1);
    expect(isAlive(pid)).toBe(false);
  });

  it("LK-07 a command that fails and leaks keeps its own exit code; --warn keeps a passing one's", async () => {
    const failing = pidFile();
    const r = await shimkit(['leaks', '--', ...doubleFork(failing.path, 4)]);
    expect(r.stderr.toString()).toContain(`sleep 600 (pid ${failing.pid()})`);
    expect(r.stderr.toString()).not.toContain('though the command exited');
    expect(r.code).toBe(4);
    expect(isAlive(failing.pid())).toBe(false);

    const warned = pidFile();
    const w = await shimkit(['leaks', '--warn', '--', ...doubleFork(warned.path, 0)]);
    expect(w.stderr.toString()).toContain(`sleep 600 (pid ${warned.pid()})`);
    expect(w.code).toBe(0);
    expect(isAlive(warned.pid())).toBe(false);
  });

  it('LK-07 a command that leaks nothing keeps its exit code and its output, and nothing about leaks is printed', async () => {
    const ok = await shimkit(['leaks', '--', 'sh', '-c', 'echo out; echo err >&2']);
    expect([ok.code, ok.stdout.toString(), ok.stderr.toString()]).toEqual([0, 'out\n', 'err\n']);
    // Without `--`, the command starts at the first argument that is not an option.
    const failed = await shimkit(['leaks', 'sh', '-c', 'exit 3']);
    expect([failed.code, failed.stdout.toString(), failed.stderr.toString()]).toEqual([3, '', '']);
    const input = await shimkit(['leaks', '--', 'cat'], { input: 'stdin passes\n' });
    expect([input.code, input.stdout.toString(), input.stderr.toString()]).toEqual([
      0,
      'stdin passes\n',
      '',
    ]);
  });

  it('LK-07 a python program that starts a child and exits without waiting for it (the pytest case) is caught', async () => {
    const leaked = pidFile();
    const program =
      'import subprocess, sys\n' +
      'child = subprocess.Popen(["sleep", "600"])\n' +
      'open(sys.argv[1], "w").write(str(child.pid))\n';
    const r = await shimkit(['leaks', '--', python3(), '-c', program, leaked.path]);
    const pid = leaked.pid();
    expect(r.stderr.toString()).toMatch(new RegExp(`^  sleep 600 \\(pid ${pid}\\) ← `, 'm'));
    expect(r.code).toBe(1);
    expect(isAlive(pid)).toBe(false);
  });

  it('LK-07 --json appends one parseable line per run; SHIMKIT_LEAKS_JSON does the same without the flag', async () => {
    const dir = testDir();
    const report = join(dir, 'leaks.jsonl');
    const leaked = pidFile();
    const command = doubleFork(leaked.path, 0);
    const r = await shimkit(['leaks', '--json', report, '--', ...command]);
    expect(r.code).toBe(1);
    const clean = await shimkit(['leaks', '--', 'true'], {
      env: { ...process.env, SHIMKIT_LEAKS_JSON: report },
    });
    expect(clean.code).toBe(0);

    const [first, second, ...more] = records(report);
    expect(more).toEqual([]);
    const pid = leaked.pid();
    expect(first).toMatchObject({
      type: 'command',
      command,
      exitCode: 0,
      signal: null,
      scanned: true,
      killed: [pid],
      remaining: [],
      exit: 1,
    });
    expect(first?.cookie).toMatch(/^cli-\d+-\d+-[0-9a-f]{8}-1$/);
    expect(first?.processes.map((p) => [p.pid, p.argv])).toEqual([[pid, ['sleep', '600']]]);
    expect(first?.processes[0]?.parents.length).toBeGreaterThan(0);
    expect(second).toMatchObject({
      type: 'command',
      command: ['true'],
      exitCode: 0,
      processes: [],
      killed: [],
      exit: 0,
    });
    expect(second?.cookie).not.toBe(first?.cookie);
  });

  it('LK-07 the command gets a fresh cookie of its own, also when SHIMKIT_LEAK_COOKIE is already set', async () => {
    const report = join(testDir(), 'leaks.jsonl');
    const r = await shimkit(
      ['leaks', '--json', report, '--', 'sh', '-c', 'echo "$SHIMKIT_LEAK_COOKIE"'],
      { env: { ...process.env, SHIMKIT_LEAK_COOKIE: 'outer-1' } },
    );
    expect(r.code).toBe(0);
    const cookie = r.stdout.toString().trim();
    expect(cookie).toMatch(/^cli-\d+-\d+-[0-9a-f]{8}-1$/);
    expect(records(report)[0]?.cookie).toBe(cookie);
  });

  it("LK-07 the README's transcript is what shimkit leaks prints (pids, cwd and parents aside)", async () => {
    const transcript = readmeBlocks().filter(
      (b) => b.section === 'Find what a test left behind' && b.code.includes('$ shimkit leaks'),
    );
    expect(transcript).toHaveLength(1);
    const printed = (transcript[0]?.code ?? '')
      .split('\n')
      .filter((line) => line.startsWith('shimkit leaks:') || line.startsWith('  '));
    const leaked = pidFile();
    const program =
      'import subprocess, sys\n' +
      'worker = subprocess.Popen(["sleep", "600"])\n' +
      'open(sys.argv[1], "w").write(str(worker.pid))\n';
    const r = await shimkit(['leaks', '--', python3(), '-c', program, leaked.path]);
    expect(r.code).toBe(1);
    // The chain past the process itself depends on the machine (init, or a subreaper).
    const general = (line: string) =>
      line
        .replace(/ outlived .* \(killed\):$/, ' outlived COMMAND (killed):')
        .replace(/^( {2}\S.*?\(pid )\d+\) ← .*\[cwd [^\]]+\]$/, '$1N) ← PARENTS  [cwd DIR]');
    expect(r.stderr.toString().trimEnd().split('\n').map(general)).toEqual(printed.map(general));
    expect(isAlive(leaked.pid())).toBe(false);
  });

  it('LK-07 SIGTERM and SIGINT are passed on to the command; its ending by a signal gives 128+N', async () => {
    const program =
      'import signal, sys\n' +
      'signal.signal(signal.SIGTERM, lambda *_: sys.exit(5))\n' +
      'print("ready", flush=True)\n' +
      'signal.pause()\n';
    const cases = [
      ['SIGTERM', [python3(), '-c', program], 5], // its handler's exit code
      // Python ends itself by SIGINT after the KeyboardInterrupt; sleep by its default action.
      ['SIGINT', [python3(), '-c', program], 130],
      ['SIGINT', ['sh', '-c', 'echo ready; exec sleep 600'], 130],
    ] as const;
    for (const [signal, command, code] of cases) {
      const r = await signalledWhenReady(command, signal);
      expect([signal, command[0], r.code, r.stdout.toString()]).toEqual([
        signal,
        command[0],
        code,
        'ready\n',
      ]);
    }
  });
});

/** Run `shimkit leaks -- COMMAND`, send `signal` to shimkit once the command printed its first line. */
async function signalledWhenReady(command: readonly string[], signal: NodeJS.Signals) {
  const child = spawnTracked(process.execPath, [CLI, 'leaks', '--', ...command]);
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const done = completion(child);
  await vi.waitFor(() => expect(out).toContain('\n'), { timeout: 10_000, interval: 10 });
  child.kill(signal);
  return done;
}

describe('shimkit leaks: usage', () => {
  it.each([
    [[], /missing the command to run/],
    [['--'], /missing the command to run/],
    [['--warn', '--json', 'x.jsonl'], /missing the command to run/],
    [
      ['--wiat-ms', '5', '--', 'touch', 'ran'],
      /unknown flag "--wiat-ms"\. Did you mean --wait-ms\?/,
    ],
    [['--wait-ms', 'soon', '--', 'touch', 'ran'], /--wait-ms takes a duration such as 200/],
    [['--wait-ms', '90000', '--', 'touch', 'ran'], /--wait-ms takes at most 60000/],
    [['--wait-ms'], /--wait-ms needs a value/],
    [
      ['--json', 'no/such/dir/r.jsonl', '--', 'touch', 'ran'],
      /--json "no\/such\/dir\/r\.jsonl": cannot open it/,
    ],
  ])('LK-07 shimkit leaks %j is a usage error (exit 2) and runs nothing', async (args, message) => {
    const dir = testDir();
    const r = await shimkit(['leaks', ...args], { cwd: dir });
    const stderr = r.stderr.toString();
    expect(stderr).toMatch(message);
    expect(stderr).toContain(
      'Usage: shimkit leaks [--warn] [--wait-ms MS] [--json PATH] -- COMMAND',
    );
    expect(r.code).toBe(2);
    expect(existsSync(join(dir, 'ran'))).toBe(false);
  });

  it('LK-07 a command that cannot be started: 127 as a shell gives, and --help says how exit codes go', async () => {
    const r = await shimkit(['leaks', '--', 'shimkit-no-such-command']);
    expect(r.stderr.toString()).toBe(
      'shimkit leaks: cannot run shimkit-no-such-command: no such command (is it on PATH?)\n',
    );
    expect(r.code).toBe(127);
    const help = await shimkit(['leaks', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout.toString()).toContain(
      "Exit code: the command's own, unless something leaked and the command exited 0:\nthen 1",
    );
    expect((await shimkit(['--help'])).stdout.toString()).toMatch(
      /^ {2}leaks +run a test command/m,
    );
  });

  it('LK-07 where there is no /proc (macOS, Windows) the command runs, a line says it was not scanned, and its exit code is kept', async () => {
    const said: string[] = [];
    const noProc = { list: () => undefined, read: () => undefined, readlink: () => undefined };
    const code = await runWithLeakCheck([process.execPath, '-e', 'process.exitCode = 3'], {
      waitMs: 500,
      warn: false,
      reader: noProc,
      write: (text) => said.push(text),
    });
    expect(code).toBe(3);
    expect(said).toEqual([
      'shimkit leaks: not scanned for leaked processes: there is no /proc here (the scan is Linux-only so far); the command ran, and its exit code is kept.\n',
    ]);
  });
});

// PERF-07: static responses served by the sh shim itself. The whole
// mock-binary suite runs on both paths in `npm run test:stress` (vitest.config.ts,
// project "runner-only"); this file checks that the two agree byte for byte, under
// dash, bash and busybox sh, and that the shell hands over exactly.
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { createMockBinary, type MockBinary } from '../../src/index.js';
import { MockExitCode } from '../../src/queue/exit-codes.js';
import {
  checkShAgreesWithRunner,
  commandPath,
  EXEC_RAW,
  isShRecord,
  racingShim,
  SHELLS,
} from '../helpers/fast-path.js';
import {
  completion,
  intoClosedPipe,
  python3,
  runCommand,
  spawnTracked,
  testDir,
} from '../helpers/index.js';
import { responses } from '../helpers/parallel.js';
import { generationDir } from '../helpers/protocol.js';

describe('PERF-07 the sh shim and the runner agree', () => {
  // A few fixed scenarios per shell here; fast-path.stress.test.ts runs many random ones.
  for (const [i, shell] of SHELLS.entries()) {
    it.skipIf(!shell.path)(
      `PERF-07 MB-03 MB-05 static and runner-only responses, raw argv, cwd and env bytes: byte-identical output, exit codes, files and call records on both paths (${shell.name}, 3 scenarios)`,
      async () => {
        const shServed = await checkShAgreesWithRunner(shell.path as string, {
          numRuns: 3,
          seed: 1907 + i,
        });
        // The property held for calls the shell did serve, not only for hand-overs.
        expect(shServed).toBeGreaterThan(0);
      },
    );
  }
});

describe('PERF-07 the shell hands a call it started over to the runner', () => {
  it('PERF-07 losing the race for a static response to a runner-only one: claimed by the shell, acted out by the runner (step c)', async () => {
    await using git = createMockBinary('git', {
      responses: [{ stdout: 'first\n' }, { chunks: [{ stdout: 'second\n' }] }],
    });
    const r = await runCommand(racingShim(git), ['loser']);
    expect([r.code, r.stdout.toString(), r.stderr.toString()]).toEqual([0, 'second\n', '']);
    const calls = git.calls();
    expect(calls.map((c) => [c.argv[0], c.response, c.status])).toEqual([
      ['racer', 1, 'exited'],
      ['loser', 2, 'exited'],
    ]);
    expect(isShRecord(git, 2)).toBe(true);
  });

  it('PERF-07 losing the race for the last response when onExhausted is fail: the runner decides, unmatched with its diagnostic (step r)', async () => {
    await using git = createMockBinary('git', {
      responses: [{ stdout: 'only\n' }],
      onExhausted: 'fail',
    });
    const r = await runCommand(racingShim(git), ['loser']);
    expect(r.code).toBe(MockExitCode.unmatched);
    expect(r.stdout.toString()).toBe('');
    expect(r.stderr.toString()).toMatch(/^shimkit: mock "git" call #2 .*\n$/);
    expect(git.calls().map((c) => [c.argv[0], c.status, c.response])).toEqual([
      ['racer', 'exited', 1],
      ['loser', 'unmatched', undefined],
    ]);
    expect(isShRecord(git, 2)).toBe(true);
  });

  it('PERF-07 a file the shell cannot write: the runner writes the files again and reports it, output never doubled (step s0)', async () => {
    for (const fastPath of [true, false]) {
      const dir = testDir();
      mkdirSync(join(dir, 'taken'));
      await using git = createMockBinary('git', {
        responses: [{ stdout: 'out\n', writeFiles: { ok: 'fine', taken: 'x' } }],
        fastPath,
      });
      const r = await runCommand(git.path, [], { cwd: dir });
      expect(r.code).toBe(MockExitCode.broken);
      expect(r.stdout.toString()).toBe('');
      expect(r.stderr.toString()).toMatch(
        /^shimkit: mock "git" call #1 could not write a file: .*EISDIR/,
      );
      expect(readFileSync(join(dir, 'ok'), 'utf8')).toBe('fine');
      expect(git.lastCall()).toMatchObject({ status: 'failed', exitCode: MockExitCode.broken });
      expect(isShRecord(git, 1)).toBe(fastPath);
    }
  });

  it('PERF-07 a closed stdout or stderr: the shell hands the rest over, and both paths write to it as Node does, to nothing (steps s1, s2)', async () => {
    // Node opens /dev/null for a closed fd 0, 1 or 2 at start-up; a shell's printf fails instead.
    for (const [close, out, err] of [
      ['>&-', '', 'err\n'],
      ['2>&-', 'out\n', ''],
    ] as const) {
      for (const fastPath of [true, false]) {
        await using git = createMockBinary('git', {
          responses: [{ stdout: 'out\n', stderr: 'err\n', exitCode: 4 }],
          fastPath,
        });
        const r = await runCommand('sh', ['-c', `exec "$0" ${close}`, git.path]);
        // What was written is written once.
        expect([r.code, r.stdout.toString(), r.stderr.toString()], close).toEqual([4, out, err]);
        expect(git.lastCall()).toMatchObject({ status: 'exited', exitCode: 4 });
        // With no stderr to keep aside, the shell leaves the call to the runner.
        expect(isShRecord(git, 1)).toBe(fastPath && close === '>&-');
      }
    }
  });

  it('PERF-07 MB-14 a reader that closed the pipe: both paths end by SIGPIPE, as a real command does, and record it', async () => {
    for (const fastPath of [true, false]) {
      await using git = createMockBinary('git', {
        responses: [{ stdout: 'out\n', delayMs: 300, exitCode: 5 }],
        fastPath,
      });
      // The read end is closed before the delay is over.
      const script =
        'import os, subprocess, sys\nr, w = os.pipe()\np = subprocess.Popen([sys.argv[1]], stdout=w)\nos.close(w)\nos.close(r)\nprint(p.wait())';
      const r = await runCommand(python3(), ['-c', script, git.path]);
      expect([r.stdout.toString(), r.stderr.toString()]).toEqual(['-13\n', '']);
      expect(git.lastCall()).toMatchObject({ status: 'exited', signal: 'SIGPIPE' });
      expect(isShRecord(git, 1)).toBe(fastPath);
    }
  });

  it('PERF-07 the record cannot take its last line (a file size limit): the runner marks it failed, the output stands (step x)', async () => {
    await using git = createMockBinary('git', { responses: [{ stdout: 'out\n', exitCode: 6 }] });
    // The record's size with an argument of 100 bytes tells how long one must be
    // for everything but the last line to fit in 512 bytes (ulimit -f 1).
    const probe = await runCommand(git.path, ['p'.repeat(100)]);
    expect(probe.code).toBe(6);
    const end = Buffer.byteLength('{"status":"exited","exitCode":6}\n');
    const size = statSync(join(generationDir(git), 'calls', '1.json')).size;
    git.reset();
    git.enqueue({ stdout: 'out\n', exitCode: 6 });
    const arg = 'a'.repeat(100 + 500 - (size - end));
    const r = await runCommand('sh', [
      '-c',
      'trap "" XFSZ; ulimit -f 1; exec "$0" "$1"',
      git.path,
      arg,
    ]);
    expect(r.stdout.toString()).toBe('out\n');
    expect(r.code).toBe(MockExitCode.broken);
    expect(r.stderr.toString()).toMatch(
      /^shimkit: mock "git" call #1 could not record how it ended/,
    );
    expect(git.calls().map((c) => [c.status, c.exitCode])).toEqual([
      ['failed', MockExitCode.broken],
    ]);
  });
});

describe('MB-14 MB-06 the shell meets a closed pipe as a real command does', () => {
  for (const shell of SHELLS) {
    it.skipIf(!shell.path)(
      `MB-14 MB-06 output into a pipe whose reader has gone, on stdout or on stderr: the shell itself records SIGPIPE and ends by it, and a pipefail script sees 141 (${shell.name})`,
      async () => {
        await using git = createMockBinary('git', {
          responses: [{ stdout: 'out\n', stderr: 'err\n', exitCode: 3 }],
        });
        const flag = join(testDir(), 'reader-closed');
        // The shim run by this shell as sh (bash then in POSIX mode).
        const call = '(exec -a sh "$SK_SHELL" "$SK_SHIM" log)';
        const script = [
          'set -o pipefail',
          intoClosedPipe(call, flag),
          'echo "stdout $?"',
          intoClosedPipe(`${call} 2>&1 >/dev/null`, flag),
          'echo "stderr $?"',
        ].join('\n');
        const env = { ...process.env, SK_SHELL: shell.path as string, SK_SHIM: git.path };
        const r = await runCommand('bash', ['-c', script], { env });
        expect([r.stdout.toString(), r.stderr.toString()]).toEqual([
          'stdout 141\nstderr 141\n',
          '',
        ]);
        expect(git.calls().map((c) => [c.status, c.signal, c.exitCode])).toEqual([
          ['exited', 'SIGPIPE', undefined],
          ['exited', 'SIGPIPE', undefined],
        ]);
        // Ended by the shell, not handed over: the runner's last line would carry endedAt.
        for (const seq of [1, 2]) {
          const record = readFileSync(join(generationDir(git), 'calls', `${seq}.json`), 'latin1');
          expect(record.endsWith('\n{"status":"exited","signal":"SIGPIPE"}\n')).toBe(true);
        }
      },
    );
  }
});

/**
 * Run a copy of `git`'s shim that stops where `pauseAt(text)` says (an
 * offset into the shim's text) until told to go on, dispose() the mock
 * there, let it go on, and return how the call ended.
 */
async function disposeWhilePaused(
  git: MockBinary,
  pauseAt: (text: string) => number,
): Promise<[number | null, string, string]> {
  const dir = testDir();
  const [paused, go] = [join(dir, 'paused'), join(dir, 'go')];
  const text = readFileSync(git.path, 'utf8');
  const at = pauseAt(text);
  const shim = join(dir, 'git');
  const pause = `: >'${paused}'; until [ -e '${go}' ]; do ${commandPath('sleep')} 0.01; done\n`;
  writeFileSync(shim, text.slice(0, at) + pause + text.slice(at), { mode: 0o700 });
  const call = spawnTracked(shim, ['status'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const ended = completion(call);
  await vi.waitFor(() => expect(existsSync(paused)).toBe(true), { timeout: 10_000 });
  await git.dispose();
  writeFileSync(go, '');
  const r = await ended;
  return [r.code, r.stdout.toString(), r.stderr.toString()];
}

describe('MB-18 a dispose() while the shell serves a call', () => {
  it('MB-18 PERF-07 a dispose() after the shell recorded and claimed a call, before it acted the response out: the call still prints its response and ends with its code', async () => {
    await using git = createMockBinary('git', { responses: [{ stdout: 'out\n', exitCode: 5 }] });
    // Once its record and claim are written.
    const claimed = '  fi >&9 || { shimkit_handover c; return; }\n';
    const r = await disposeWhilePaused(git, (text) => {
      expect(text).toContain(claimed);
      return text.indexOf(claimed) + claimed.length;
    });
    expect(r).toEqual([5, 'out\n', '']);
  });
});

describe('MB-18 a dispose() between the claim marker and its name', () => {
  it('MB-18 PERF-07 a dispose() right after the shell made the claim marker: the marker already names the call, which prints its response and ends with its code', async () => {
    await using git = createMockBinary('git', { responses: [{ stdout: 'out\n', exitCode: 5 }] });
    // Right after its claim loop (the marker made).
    const r = await disposeWhilePaused(git, (text) => {
      const made = text.indexOf('>"$shimkit_slot"');
      const loopEnd = '\n    done\n    set +C\n';
      const at = text.indexOf(loopEnd, made);
      expect(made).toBeGreaterThan(0);
      expect(at).toBeGreaterThan(made);
      return at + loopEnd.length;
    });
    expect(r).toEqual([5, 'out\n', '']);
  });
});

describe('PERF-07 what the reviewers broke', () => {
  it('PERF-07 a non-blocking stdout that is nearly full: the output arrives exactly once on both paths', async () => {
    // The pipe holds 60,000 bytes already; a 10,000-byte response cannot go in one write.
    const script = [
      'import fcntl, os, subprocess, sys',
      'r, w = os.pipe()',
      'os.write(w, b"x" * 60000)',
      'fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) | os.O_NONBLOCK)',
      'p = subprocess.Popen([sys.argv[1]], stdout=w)',
      'os.close(w)',
      'data = b""',
      'while True:',
      '    chunk = os.read(r, 65536)',
      '    if not chunk: break',
      '    data += chunk',
      'print(p.wait(), len(data) - 60000)',
    ].join('\n');
    for (const fastPath of [true, false]) {
      await using git = createMockBinary('git', {
        responses: [{ stdout: 'y'.repeat(10_000) }],
        fastPath,
      });
      const r = await runCommand(python3(), ['-c', script, git.path]);
      expect(r.stdout.toString(), r.stderr.toString()).toBe('0 10000\n');
      expect(git.lastCall()).toMatchObject({ status: 'exited', exitCode: 0 });
    }
  });

  // A SIGKILLed shim cannot end the sleep of its delay: it ends by itself when the delay is over.
  const delayOfKilledCall = {
    meta: {
      shimkit: {
        leaks: { allow: [{ argv: '/bin/sleep', reason: 'the delay of a SIGKILLed call' }] },
      },
    },
  };
  it(
    "PERF-07 a call SIGKILLed in its delay leaves no process holding the caller's stdout, stderr or its record",
    delayOfKilledCall,
    async () => {
      await using git = createMockBinary('git', {
        responses: [{ stdout: 'late\n', delayMs: 1800 }],
      });
      const dir = testDir();
      const [out, err] = [join(dir, 'out'), join(dir, 'err')];
      // The caller's stdout and stderr are files here, so whoever holds them can be seen.
      const child = spawnTracked('sh', ['-c', 'exec "$0" >"$1" 2>"$2"', git.path, out, err]);
      const done = completion(child);
      await vi.waitFor(() => expect(sleepers()).not.toEqual([]), { timeout: 5000, interval: 5 });
      child.kill('SIGKILL');
      expect((await done).signal).toBe('SIGKILL');
      const record = join(generationDir(git), 'calls', '1.json');
      for (const pid of sleepers()) {
        const held = fdsOf(pid).map((fd) => readlinkFd(pid, fd));
        for (const file of [out, err, record])
          expect(held, `sleep ${pid} holds ${file}`).not.toContain(file);
      }
    },
  );

  it('PERF-07 an enqueue under way (sh/<count + 1> there, state.sh not yet rewritten): an exhausted call goes to the runner, never a stale repeat', async () => {
    await using git = createMockBinary('git', { responses: responses(1) });
    expect((await runCommand(git.path)).stdout.toString()).toBe('r1\n');
    writeFileSync(join(generationDir(git), 'sh', '2'), ''); // as the writer leaves it mid-enqueue
    expect((await runCommand(git.path)).stdout.toString()).toBe('r1\n');
    expect([isShRecord(git, 1), isShRecord(git, 2)]).toEqual([true, false]);
  });

  it('PERF-07 handle() and then handle(undefined): the live marker goes, and the shell serves calls again', async () => {
    await using git = createMockBinary('git', { responses: responses(2) });
    git.handle(() => ({ stdout: 'handled\n' }));
    git.handle(undefined);
    expect((await runCommand(git.path)).stdout.toString()).toBe('r1\n');
    expect(isShRecord(git, 1)).toBe(true);
  });

  it('PERF-07 a file size limit (ulimit -f 0): both paths fail the same way, with the diagnostic', async () => {
    const seen = [];
    for (const fastPath of [true, false]) {
      await using git = createMockBinary('git', { responses: responses(1), fastPath });
      const r = await runCommand('sh', ['-c', 'ulimit -f 0; exec "$0"', git.path]);
      seen.push([r.code, r.signal, r.stderr.toString().replaceAll(git.stateDir, '<state>')]);
    }
    expect(seen[0]?.[0]).toBe(MockExitCode.broken);
    expect(seen[0]?.[2]).toMatch(/^shimkit: could not write .*EFBIG/);
    expect(seen[1]).toEqual(seen[0]);
  });

  it.skipIf(!commandPath('bash'))(
    'PERF-07 bash as sh with functions exported in the env (pwd, printf): the shell still uses its builtins',
    async () => {
      await using git = createMockBinary('git', { responses: responses(1) });
      const dir = testDir();
      const env = {
        ...process.env,
        'BASH_FUNC_pwd%%': '() { echo /fake; }',
        'BASH_FUNC_printf%%': '() { echo faked; }',
      };
      const r = await runCommand(
        python3(),
        [EXEC_RAW, commandPath('bash') as string, git.path, Buffer.from(dir).toString('hex')],
        { env },
      );
      expect([r.code, r.stdout.toString()]).toEqual([0, 'r1\n']);
      expect(git.lastCall()?.cwd).toBe(dir);
      expect(isShRecord(git, 1)).toBe(true);
    },
  );
});

/** Pids of `sleep` processes the fast path started (their command line holds the delay). */
function sleepers(): string[] {
  return readdirSync('/proc').filter((pid) => {
    if (!/^[0-9]+$/.test(pid)) return false;
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').includes('1.800');
    } catch {
      return false;
    }
  });
}

/** The open fds of `pid`; none once it has exited (it may between listing and reading). */
function fdsOf(pid: string): string[] {
  try {
    return readdirSync(`/proc/${pid}/fd`);
  } catch {
    return [];
  }
}

function readlinkFd(pid: string, fd: string): string {
  try {
    return readlinkSync(`/proc/${pid}/fd/${fd}`);
  } catch {
    return '(gone)';
  }
}

describe('PERF-07 SEC-01 the shell writes its own files 0600, whatever the caller umask', () => {
  /** The modes of the files in `dir`, in name order, as octal text. */
  const modes = (dir: string) =>
    readdirSync(dir)
      .sort()
      .map((name) => (statSync(join(dir, name)).mode & 0o777).toString(8));

  for (const shell of SHELLS) {
    it.skipIf(!shell.path)(
      `PERF-07 SEC-01 under umask 022 and 027: call records and claim markers 0600, the files a response writes as the runner writes them (${shell.name})`,
      async () => {
        for (const mask of ['022', '027']) {
          const written = [];
          for (const fastPath of [true, false]) {
            const cwd = testDir();
            await using git = createMockBinary('git', {
              responses: [{ stdout: 'a', writeFiles: { 'd/f.txt': 'x' } }, { stdout: 'b' }],
              fastPath,
            });
            for (const arg of ['1', '2']) {
              const r = spawnSync(
                shell.path as string,
                // (busybox runs as sh when its argv[0] or first argument says so.)
                [
                  '-c',
                  `umask ${mask}; exec "$0" ${shell.name === 'busybox' ? 'sh ' : ''}"$@"`,
                  shell.path as string,
                  git.path,
                  arg,
                ],
                { cwd, encoding: 'utf8', argv0: 'sh' },
              );
              expect([r.status, r.stdout, r.stderr]).toEqual([0, arg === '1' ? 'a' : 'b', '']);
            }
            expect([1, 2].map((seq) => isShRecord(git, seq))).toEqual([fastPath, fastPath]);
            const gen = generationDir(git);
            expect(modes(join(gen, 'calls'))).toEqual(['600', '600']);
            expect(modes(join(gen, 'claims'))).toEqual(['600', '600']);
            written.push([modes(cwd), modes(join(cwd, 'd'))]);
          }
          expect(written[0]).toEqual(mask === '022' ? [['755'], ['644']] : [['750'], ['640']]);
          expect(written[1]).toEqual(written[0]);
        }
      },
    );
  }

  it("PERF-07 SEC-01 a call the shell claimed and handed over (step c): the runner has the caller's umask back", async () => {
    const cwd = testDir();
    await using git = createMockBinary('git', {
      responses: [
        { stdout: 'first\n' },
        { chunks: [{ stdout: 'second\n' }], writeFiles: { w: 'x' } },
      ],
    });
    const shim = racingShim(git);
    const r = spawnSync('sh', ['-c', 'umask 027; exec "$0" "$@"', shim, 'loser'], {
      cwd,
      encoding: 'utf8',
    });
    expect([r.status, r.stdout, r.stderr]).toEqual([0, 'second\n', '']);
    expect(isShRecord(git, 2)).toBe(true);
    expect(modes(cwd)).toEqual(['640']);
    expect(modes(join(generationDir(git), 'calls'))).toEqual(['600', '600']);
  });
});

describe('PERF-07 MB-06 recorded env', () => {
  it("PERF-07 MB-06 recordEnv keys a shell sets for itself (PS4, OPTIND, PPID, IFS, _) are recorded as the caller's env has them, on both paths", async () => {
    const keys = ['PS4', 'OPTIND', 'PPID', 'IFS', '_', 'HOME', 'SK_SET'];
    const seen = [];
    for (const fastPath of [true, false]) {
      await using git = createMockBinary('git', {
        responses: responses(1),
        recordEnv: keys,
        fastPath,
      });
      const env = { PATH: process.env.PATH, HOME: '/home/x', SK_SET: 'yes' };
      expect((await runCommand(git.path, [], { env })).stdout.toString()).toBe('r1\n');
      seen.push(git.lastCall()?.env);
    }
    expect(seen[0]).toEqual({ HOME: '/home/x', SK_SET: 'yes' });
    expect(seen[1]).toEqual(seen[0]);
  });
});

describe('PERF-07 SEC-02 the shell reads only its own files', () => {
  it('PERF-07 SEC-02 no state.sh, a garbled one, or no sh/ dir: every call goes to the runner, which serves it or names what is broken', async () => {
    await using git = createMockBinary('git', { responses: responses(4) });
    const stateSh = join(git.stateDir, 'state.sh');
    const saved = readFileSync(stateSh, 'utf8');
    rmSync(stateSh);
    expect((await runCommand(git.path)).stdout.toString()).toBe('r1\n');
    writeFileSync(stateSh, '{not sh at all');
    expect((await runCommand(git.path)).stdout.toString()).toBe('r2\n');
    writeFileSync(stateSh, saved);
    expect((await runCommand(git.path)).stdout.toString()).toBe('r3\n');
    rmSync(join(generationDir(git), 'sh'), { recursive: true });
    expect((await runCommand(git.path)).stdout.toString()).toBe('r4\n');
    expect([1, 2, 3, 4].map((seq) => isShRecord(git, seq))).toEqual([false, false, true, false]);
    rmSync(join(git.stateDir, 'state.json'));
    const r = await runCommand(git.path);
    expect(r.code).toBe(MockExitCode.broken);
    expect(r.stderr.toString()).toMatch(/^shimkit: a state file is missing .*state\.json\n$/);
  });

  it("PERF-07 SEC-02 a queue line written by hand, with no sh/<n> for it, is the runner's: never a silent default", async () => {
    await using git = createMockBinary('git');
    writeFileSync(join(generationDir(git), 'queue.jsonl'), '{"stdout": oops}\n');
    const r = await runCommand(git.path);
    expect(r.code).toBe(MockExitCode.broken);
    expect(r.stderr.toString()).toMatch(/queue line 1 is not valid JSON/);
  });
});

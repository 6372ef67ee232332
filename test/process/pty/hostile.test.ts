// SP-13 under the inputs and failures a hostile review tried: relative dirs,
// signals the helper must not take, bytes execve cannot carry, a full fd
// table, output still in the terminal past drainMs, a test process killed
// with SIGKILL, shell jobs that ignore SIGHUP, a umask changed after the
// spare started, and a program that cannot be executed.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { InvalidOptionError, SpawnError, spawnProcess } from '../../../src/index.js';
import { encodeLaunch } from '../../../src/process/pty/python.js';
import { completion, isAlive, python3, spawnTracked, testDir } from '../../helpers/index.js';
import { sessionOf, spawned, stateOf, theSpare } from '../../helpers/pty.js';

const DIST = fileURLToPath(new URL('../../../dist/index.js', import.meta.url));
const HELPER = fileURLToPath(new URL('../../../shims/pty.py', import.meta.url));
const linux = process.platform === 'linux';

describe('SP-13 what the program is given', () => {
  it('SP-13 a relative cwd is the same dir as on pipes', async () => {
    const dir = join(testDir(), 'sub dir');
    mkdirSync(dir);
    const cwd = relative(process.cwd(), dir);
    const p = spawned('pwd', [], { cwd, pty: true });
    expect(await p.wait({ timeoutMs: 10_000 })).toMatchObject({ exitCode: 0 });
    expect(p.screen().lines[0]).toBe(dir);
  });

  it("SP-13 the umask is the test process's now, not the one the spare helper started with", async () => {
    await spawned('true', [], { pty: true }).wait({ timeoutMs: 10_000 }); // a spare starts
    const before = process.umask(0o077);
    onTestFinished(() => {
      process.umask(before);
    });
    const p = spawned('sh', ['-c', 'umask'], { pty: true });
    expect(await p.wait({ timeoutMs: 10_000 })).toMatchObject({ exitCode: 0 });
    expect(p.screen().lines[0]).toBe('0077');
  });

  it('SP-13 a NUL in an argument or the env, and an env name execve cannot take, are refused', () => {
    expect(() => spawnProcess('echo', ['a\0b', 'last'], { pty: true })).toThrow(InvalidOptionError);
    expect(() => spawnProcess('echo', ['a\0b'], { pty: true })).toThrow(
      /Argument 1 of spawnProcess\("echo"\) holds a NUL byte/,
    );
    for (const env of [{ V: 'x\0INJECTED=1' }, { '': 'x' }, { 'A=B': 'c' }]) {
      expect(() => spawnProcess('echo', [], { pty: true, env })).toThrow(
        /cannot be passed to a program on a PTY: a name must be non-empty without "=" or NUL/,
      );
    }
  });

  it('SP-13 a program that cannot be executed rejects wait() with a SpawnError, as on pipes', async () => {
    const script = join(testDir(), 'bad-shebang');
    writeFileSync(script, '#!/nonexistent/interpreter\necho never\n', { mode: 0o755 });
    const p = spawned(script, [], { pty: true });
    const error = await p.wait({ timeoutMs: 10_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SpawnError);
    expect((error as Error).message).toBe(
      `Could not start ${script} in ${process.cwd()}: spawn ${script} ENOENT`,
    );
    expect(p.running).toBe(false);
  });
});

describe('SP-13 signals and ends', () => {
  it.skipIf(!linux)(
    'SP-13 the program starts with no signal blocked or ignored, though the helper was started with some (job control needs SIGCHLD)',
    async () => {
      // A parent that is not Node (libuv clears both): SIGCHLD, SIGINT and
      // SIGTERM blocked, SIGTRAP and a real-time signal ignored.
      const wrapper = [
        'import os, signal, sys',
        'signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGCHLD, signal.SIGINT, signal.SIGTERM])',
        'signal.signal(signal.SIGTRAP, signal.SIG_IGN)',
        'signal.signal(signal.SIGRTMIN + 2, signal.SIG_IGN)',
        'os.execv(sys.executable, [sys.executable, "-I", "-S", sys.argv[1]])',
      ].join('\n');
      const helper = spawnTracked(python3(), ['-c', wrapper, HELPER], {
        stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
        detached: true,
      });
      const done = completion(helper);
      const grep = '/bin/grep';
      const launch = encodeLaunch(
        {
          file: grep,
          command: 'grep',
          args: ['-E', '^Sig(Blk|Ign)', '/proc/self/status'],
          cwd: testDir(),
          env: { PATH: '/usr/bin:/bin' },
          drainMs: 2000,
          keep: false,
          pty: { cols: 80, rows: 24 } as never,
        },
        0o022,
      );
      (helper.stdio[3] as NodeJS.WritableStream).write(launch);
      helper.stdin?.end();
      const exit = await done;
      expect(exit.stderr.toString()).toBe('');
      expect(exit.stdout.toString()).toBe(
        'SigBlk:\t0000000000000000\r\nSigIgn:\t0000000000000000\r\n',
      );
      expect(exit.code).toBe(0);
    },
  );

  it('SP-13 kill() with a signal the program handles reaches the program; the helper stays', async () => {
    const p = spawned(
      python3(),
      [
        '-c',
        'import signal, sys\nfor s in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM):\n  signal.signal(s, lambda n, f: print("got", signal.Signals(n).name, flush=True))\nprint("ready", flush=True)\nsys.stdin.readline()\nprint("done")',
      ],
      { pty: true },
    );
    await p.waitForScreen('ready');
    for (const signal of ['SIGUSR1', 'SIGUSR2', 'SIGALRM'] as const) {
      expect(p.kill(signal)).toBe(true);
      await p.waitForScreen(`got ${signal}`);
    }
    p.press('Enter');
    expect(await p.wait({ timeoutMs: 10_000 })).toMatchObject({ exitCode: 0, signal: null });
    expect(p.screen().lines).toContain('done');
  });

  it.skipIf(!linux)(
    'SP-13 close() also ends a shell job in a group of its own that ignores SIGHUP and SIGTERM',
    async () => {
      const pidFile = join(testDir(), 'job.pid');
      const p = spawned('bash', ['--norc', '--noprofile', '-i'], {
        pty: true,
        env: { PS1: 'PROMPT$ ' },
        graceMs: 200,
      });
      await p.waitForScreen('PROMPT$');
      p.type(`(trap '' HUP TERM; exec sleep 104) & echo $! > ${pidFile}\r`);
      await vi.waitFor(() => expect(readFileSync(pidFile, 'utf8')).toMatch(/^\d+\n$/), {
        timeout: 10_000,
      });
      const job = Number(readFileSync(pidFile, 'utf8'));
      onTestFinished(() => {
        if (isAlive(job)) process.kill(job, 'SIGKILL');
      });
      await p.close();
      await vi.waitFor(() => expect(isAlive(job)).toBe(false), { timeout: 10_000 });
    },
  );

  it.skipIf(!linux)(
    'SP-13 when the test process is killed with SIGKILL, a program still reading the terminal is hung up',
    async () => {
      const dir = testDir();
      const pidFile = join(dir, 'cat.pid');
      const script = `
        const { spawnProcess } = await import(${JSON.stringify(DIST)});
        const p = spawnProcess('sh', ['-c', 'echo $$ > ${pidFile}; exec cat'], { pty: true });
        await p.waitForOutput(/never printed/, { timeoutMs: 60000 });
      `;
      const node = spawnTracked(process.execPath, ['--input-type=module', '-e', script]);
      await vi.waitFor(() => expect(readFileSync(pidFile, 'utf8')).toMatch(/^\d+\n$/), {
        timeout: 10_000,
      });
      const cat = Number(readFileSync(pidFile, 'utf8'));
      onTestFinished(() => {
        if (isAlive(cat)) process.kill(cat, 'SIGKILL');
      });
      node.kill('SIGKILL');
      await vi.waitFor(() => expect(isAlive(cat)).toBe(false), { timeout: 10_000 });
    },
  );
});

describe('SP-13 a second review', () => {
  it('SP-13 a program killed by SIGKILL reports SIGKILL, as on pipes', async () => {
    const p = spawned('sh', ['-c', 'kill -9 $$'], { pty: true });
    expect(await p.wait({ timeoutMs: 10_000 })).toMatchObject({
      exitCode: null,
      signal: 'SIGKILL',
    });
    expect(p.output()).toBe('');
  });

  it('SP-13 an exec failure is a SpawnError every time, though the helper exits before Node reads why', async () => {
    const script = join(testDir(), 'bad-shebang');
    writeFileSync(script, '#!/missing/interpreter\n', { mode: 0o755 });
    const outcomes = new Set<string>();
    for (let run = 0; run < 60; run++) {
      const p = spawnProcess(script, [], { pty: true });
      outcomes.add(
        await p.wait({ timeoutMs: 10_000 }).then(
          (r) => JSON.stringify(r),
          (e: Error) => e.name,
        ),
      );
      await p.close();
    }
    expect([...outcomes]).toEqual(['SpawnError']);
  });

  it('SP-13 a background process that writes on and on is cut off after drainMs and about 1 s more', async () => {
    const p = spawned('sh', ['-c', '(while :; do echo tick; sleep 0.02; done) & echo main'], {
      pty: true,
      drainMs: 300,
    });
    // A hang detector, not a speed check: without the cap this took ~70 minutes.
    expect(await p.wait({ timeoutMs: 20_000 })).toMatchObject({ timedOut: false, exitCode: 0 });
    expect(p.output()).toContain('main');
  });

  it.skipIf(!linux)('SP-13 a stopped spare is not used', async () => {
    await spawned('true', [], { pty: true }).wait({ timeoutMs: 10_000 });
    const spare = await theSpare();
    process.kill(spare, 'SIGSTOP');
    await vi.waitFor(() => expect(stateOf(spare)).toBe('T'));
    const p = spawned('sh', ['-c', 'echo fine'], { pty: true });
    expect(p.pid).not.toBe(spare);
    expect(await p.wait({ timeoutMs: 10_000 })).toMatchObject({ exitCode: 0 });
    expect(isAlive(spare)).toBe(false); // killed, not left stopped
  });

  it.skipIf(!linux)(
    'SP-13 close() ends a job that keeps forking new processes into the session',
    async () => {
      const p = spawned('bash', ['--norc', '--noprofile', '-i'], {
        pty: true,
        env: { PS1: 'PROMPT$ ' },
        graceMs: 200,
      });
      await p.waitForScreen('PROMPT$');
      p.type(
        `trap "" HUP TERM; (trap "" HUP TERM; while :; do sleep 4321 & sleep 0.003; done) &\r`,
      );
      await vi.waitFor(() => expect(sessionOf(p.pid).length).toBeGreaterThan(3), {
        timeout: 10_000,
      });
      const sid = p.pid;
      await p.close();
      await vi.waitFor(() => expect(sessionOf(sid)).toEqual([]), { timeout: 10_000 });
    },
  );

  it.skipIf(!linux)(
    'SP-13 a test process that exits without close() still ends a job left in the session',
    async () => {
      const pidFile = join(testDir(), 'job.pid');
      const script = `
        const { spawnProcess } = await import(${JSON.stringify(DIST)});
        const p = spawnProcess('bash', ['--norc', '--noprofile', '-i'], { pty: true, env: { PS1: 'PROMPT$ ' } });
        await p.waitForScreen('PROMPT$');
        p.type('trap "" HUP; sleep 1234 & echo $! > ${pidFile}; exit\\r');
        await p.wait({ timeoutMs: 10000 });
      `;
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      const job = Number(readFileSync(pidFile, 'utf8'));
      onTestFinished(() => {
        if (isAlive(job)) process.kill(job, 'SIGKILL');
      });
      await vi.waitFor(() => expect(isAlive(job)).toBe(false), { timeout: 10_000 });
    },
  );
});

describe('SP-13 output at exit', () => {
  it('SP-13 what the program wrote is read to the end even with drainMs 0 and a busy test process', async () => {
    for (const size of [196_000, 500_000]) {
      const p = spawnProcess(
        python3(),
        [
          '-c',
          `import sys, tty; tty.setraw(1); sys.stdout.buffer.write(b"x" * ${size}); sys.stdout.flush()`,
        ],
        { pty: true, drainMs: 0, tailBytes: 16 },
      );
      // Keep this event loop from reading for a while: the helper's writes to
      // it block, and its drain deadline passes with the terminal still full.
      const until = performance.now() + 800;
      while (performance.now() < until) {
        // busy
      }
      expect(await p.wait({ timeoutMs: 20_000 })).toMatchObject({ exitCode: 0 });
      expect({ size, got: p.stdout.totalBytes }).toEqual({ size, got: size });
      await p.close();
    }
  });

  it.skipIf(!linux)(
    'SP-13 an fd table too full to start the helper gives a SpawnError, not a crash',
    () => {
      const script = `
        const { spawnProcess } = await import(${JSON.stringify(DIST)});
        const { openSync, closeSync } = await import('node:fs');
        process.on('uncaughtException', (e) => { console.log('UNCAUGHT ' + e.message); process.exit(3); });
        const fds = [];
        try { for (;;) fds.push(openSync('/dev/null', 'r')); } catch {}
        for (let i = 0; i < 3; i++) closeSync(fds.pop());
        const p = spawnProcess('echo', ['hi'], { pty: true });
        const r = await p.wait({ timeoutMs: 5000 }).catch((e) => e.name + ' ' + e.code);
        for (const fd of fds) closeSync(fd);
        await new Promise((resolve) => setImmediate(resolve));
        // close() of a process that never started signals nothing (pid 0: never the session 0).
        const kills = [];
        const kill = process.kill;
        process.kill = (pid, signal) => { kills.push([pid, signal]); return true; };
        await p.close();
        process.kill = kill;
        console.log(JSON.stringify({ r, pid: p.pid, kills }));
      `;
      const r = spawnSync(
        'sh',
        ['-c', `ulimit -n 200 && exec "$0" --input-type=module -e "$1"`, process.execPath, script],
        {
          encoding: 'utf8',
          timeout: 30_000,
        },
      );
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({
        r: 'SpawnError ERR_SHIMKIT_SPAWN',
        pid: 0,
        kills: [],
      });
    },
  );
});

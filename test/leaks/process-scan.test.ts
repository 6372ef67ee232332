import { spawn } from 'node:child_process';
import { delimiter } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import {
  createMockBinary,
  createSandbox,
  type LeakReport,
  type LeakScope,
  proxyStdio,
  run,
  sanitize,
  spawnProcess,
} from '../../src/index.js';
import { findCookieProcesses, readArgv } from '../../src/leaks/scan.js';
import { isAlive, runCommand, testDir } from '../helpers/index.js';

const linux = process.platform === 'linux';

/** A scope for this test, checked at its end if the test did not check it. */
function scope(label: string): LeakScope {
  const leaks = sanitize.begin(label);
  onTestFinished(() => leaks.check().then(() => {}));
  return leaks;
}

/** SIGKILL a pid when the test finishes, should the sanitizer not have. */
function killAtEnd(pid: number): void {
  onTestFinished(() => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  });
}

/** The pid a command printed (as its first line), once it has. */
async function printedPid(output: () => string): Promise<number> {
  let pid = 0;
  await vi.waitFor(
    () => {
      const match = /^(\d+)\n/.exec(output());
      expect(match).not.toBeNull();
      pid = Number(match?.[1]);
    },
    { timeout: 10_000, interval: 10 },
  );
  killAtEnd(pid);
  return pid;
}

/**
 * A sh script that starts `command` under setsid and prints its pid once it
 * has left sh's session and exec'd `command`: run() closes sh's group when
 * sh exits, which would otherwise catch the child before its setsid().
 */
function escapee(command: string): string {
  const left = `[ "$(cut -d' ' -f6 /proc/$!/stat)" = "$!" ] && [ "$(cat /proc/$!/comm)" != setsid ]`;
  return `setsid ${command} </dev/null >/dev/null 2>&1 & i=0; until ${left} || [ $i -ge 100000 ]; do i=$((i+1)); done; echo $!`;
}

/** The report's process of `pid`, checked to be found and killed. */
function foundAndKilled(report: LeakReport, pid: number) {
  const found = report.processes.find((p) => p.pid === pid);
  expect(found, sanitize.format(report)).toBeDefined();
  expect(report.killed).toContain(pid);
  expect(report.remaining).toEqual([]);
  expect(isAlive(pid)).toBe(false);
  return found as NonNullable<typeof found>;
}

describe.runIf(linux)('leak sanitizer: processes carrying the cookie (Linux /proc)', () => {
  it('LK-01 a double-forked daemon started through spawnProcess is found with its argv and cwd, and killed', async () => {
    const dir = testDir();
    const leaks = scope('double fork');
    const p = spawnProcess('sh', ['-c', '( sleep 600 </dev/null >/dev/null 2>&1 & echo $! ) &'], {
      cwd: dir,
    });
    onTestFinished(() => p.close().then(() => {}));
    const pid = await printedPid(() => p.output());
    await p.wait({ timeoutMs: 10_000 });

    const report = await leaks.check();
    const found = foundAndKilled(report, pid);
    expect(found.argv).toEqual(['sleep', '600']);
    expect(found.cwd).toBe(dir);
    // Its parents (the subshell and sh) are gone: it was adopted by init or a subreaper.
    expect(found.parents.map((link) => link.pid)).not.toContain(p.pid);
    expect(found.parents.length).toBeGreaterThan(0);
    const text = sanitize.format(report);
    expect(text).toMatch(new RegExp(`^  process  sleep 600 \\(pid ${pid}\\) ← `, 'm'));
    // Its parents are gone, yet its env names the object that started its tree, and the test line.
    expect(found.startedBy).toMatchObject({
      kind: 'process',
      name: expect.stringMatching(/^sh -c /),
    });
    expect(text).toMatch(
      /started by process sh -c .* made at test\/leaks\/process-scan\.test\.ts:\d+$/m,
    );
  });

  it('LK-01 a setsid escapee (its own session and group) started through run() is found and killed', async () => {
    const dir = testDir();
    const leaks = scope('setsid');
    // run() closes the group of what it ran; setsid leaves it, so this one outlives run().
    const r = await run('sh', ['-c', escapee('sleep 600')], {
      cwd: dir,
      timeoutMs: 10_000,
    });
    const pid = Number(r.stdout.trim());
    killAtEnd(pid);
    await vi.waitFor(
      () => expect(findCookieProcesses(leaks.cookie)?.map((x) => x.pid)).toContain(pid),
      { timeout: 10_000, interval: 10 },
    );
    const stat = await import('node:fs').then((fs) =>
      fs.readFileSync(`/proc/${pid}/stat`, 'latin1'),
    );
    const [, , pgid, sid] = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    expect([pgid, sid]).toEqual([pid, pid]); // it left the group and session

    const report = await leaks.check();
    const found = foundAndKilled(report, pid);
    expect(found.argv).toEqual(['sleep', '600']);
    expect(found.cwd).toBe(dir);
  });

  it("LK-01 what a mock binary's passthrough starts carries the cookie, though the caller's env has none", async () => {
    const dir = testDir();
    const leaks = scope('passthrough');
    await using sleep = createMockBinary('sleep', { responses: [{ passthrough: true }] });
    // The caller passes an env of its own, without the cookie: the mock, made
    // in this scope, gives it to the real command.
    const child = spawn('sleep', ['600'], {
      cwd: dir,
      env: { PATH: `${sleep.dir}${delimiter}${process.env.PATH}` },
      stdio: 'ignore',
    });
    onTestFinished(() => {
      child.kill('SIGKILL');
    });
    const runner = child.pid as number;
    let pid = 0;
    await vi.waitFor(
      () => {
        const now = findCookieProcesses(leaks.cookie) ?? [];
        const real = now.find((x) => x.argv[1] === '600');
        expect(real).toBeDefined();
        pid = (real as { pid: number }).pid;
      },
      { timeout: 10_000, interval: 10 },
    );
    killAtEnd(pid);

    const report = await leaks.check();
    const found = foundAndKilled(report, pid);
    // The real sleep, by the path the runner found on PATH past the shim.
    expect(found.argv).toEqual([expect.stringMatching(/\/sleep$/), '600']);
    expect(found.argv[0]).not.toContain(sleep.dir);
    expect(found.cwd).toBe(dir);
    // Its chain: the mock's runner (the shim execs it, with the caller's pid), then this test process.
    expect(found.parents.map((link) => link.pid)).toEqual([runner, process.pid]);
    expect(found.parents[0]?.argv.join(' ')).toMatch(/node/);
    expect(sanitize.format(report)).toContain(
      `← mock \`sleep\` passthrough (pid ${runner}) ← this test process (pid ${process.pid})`,
    );
    // The runner itself was called without the cookie: it is not blamed.
    expect(report.processes.map((x) => x.pid)).not.toContain(runner);
  });

  it("LK-01 a grandchild a mock's passthrough left behind, its parents gone, names the mock and the line that made it", async () => {
    const dir = testDir();
    const leaks = scope('passthrough grandchild');
    const bash = createMockBinary('bash', { spy: true }); // every call runs the real bash
    // The caller has no cookie; the real bash backgrounds a sleep and exits, so does the runner.
    const caller = spawn('bash', ['-c', 'sleep 606 >/dev/null 2>&1 & echo $!'], {
      cwd: dir,
      env: { PATH: `${bash.dir}${delimiter}${process.env.PATH}` },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let printed = '';
    caller.stdout.on('data', (chunk: Buffer) => {
      printed += chunk;
    });
    await new Promise<void>((done) => caller.once('close', () => done()));
    const pid = Number(printed.trim());
    killAtEnd(pid);
    bash.dispose();
    await vi.waitFor(
      () => expect(findCookieProcesses(leaks.cookie)?.map((x) => x.pid)).toContain(pid),
      {
        timeout: 10_000,
        interval: 10,
      },
    );

    const report = await leaks.check();
    const found = foundAndKilled(report, pid);
    expect(found.parents.map((link) => link.pid)).not.toContain(process.pid); // reparented away
    expect(found.startedBy).toMatchObject({ kind: 'mock binary', name: 'bash' });
    expect(found.startedBy?.madeAt).toMatch(/process-scan\.test\.ts:\d+$/);
    expect(sanitize.format(report)).toContain(
      `started by mock binary \`bash\` made at ${found.startedBy?.madeAt}`,
    );
  });

  it('LK-02 a PTY session still running is shown as its process, with its foreground process and the output no wait read', async () => {
    const leaks = scope('pty holds');
    const p = spawnProcess('sh', ['-c', 'echo $$; echo unread; exec tail -f /dev/null'], {
      pty: true,
    });
    onTestFinished(() => p.close().then(() => {}));
    const pid = await printedPid(() => p.output().replace(/\r/g, ''));
    await vi.waitFor(() => expect(p.output()).toContain('unread'), {
      timeout: 10_000,
      interval: 10,
    });
    await vi.waitFor(
      () =>
        expect(findCookieProcesses(leaks.cookie)?.map((x) => x.argv)).toContainEqual([
          'tail',
          '-f',
          '/dev/null',
        ]),
      { timeout: 10_000, interval: 10 },
    );
    const report = await leaks.check();
    const found = foundAndKilled(report, pid);
    expect(found.startedBy).toMatchObject({ kind: 'PTY session' });
    expect(found.holds, sanitize.format(report)).toEqual([
      `PTY foreground: tail (pid ${pid})`,
      expect.stringMatching(/^\d+ B of terminal output not read by a wait$/),
    ]);
    expect(report.objects).toEqual([]); // not twice: as an object too
    expect(sanitize.format(report)).toContain(`holds: PTY foreground: tail (pid ${pid})`);
  });

  it('LK-01 a process started with an explicit env that lacks the cookie gets it: a sandbox, run() with env, proxyStdio', async () => {
    const dir = testDir();
    const leaks = scope('explicit env');
    await using sb = createSandbox();
    const pids: number[] = [];
    // A sandbox's env copies none of process.env; `env` names no cookie.
    const r = await run('sh', ['-c', escapee('sleep 601')], {
      sandbox: sb,
      env: { CI: '1' },
      timeoutMs: 10_000,
    });
    pids.push(Number(r.stdout.trim()));
    // The sandbox's env() as given to a spawn of the test's own.
    expect(sb.env()).toHaveProperty('SHIMKIT_LEAK_COOKIE', leaks.cookie);
    const own = spawn('sleep', ['602'], { env: sb.env(), stdio: 'ignore', cwd: dir });
    pids.push(own.pid as number);
    // proxyStdio with an env of its own.
    const proxy = await proxyStdio('sleep', ['603'], { env: { PATH: process.env.PATH ?? '' } });
    onTestFinished(() => proxy.close().then(() => {}));
    pids.push(proxy.pid);
    for (const pid of pids) killAtEnd(pid);

    const report = await leaks.check();
    for (const pid of pids) foundAndKilled(report, pid);
    expect(report.processes.map((x) => x.argv)).toEqual(
      expect.arrayContaining([
        ['sleep', '601'],
        ['sleep', '602'],
        ['sleep', '603'],
      ]),
    );
    const own602 = report.processes.find((x) => x.pid === own.pid);
    expect(own602?.parents[0]?.pid).toBe(process.pid);
  });

  it('LK-01 a program run on a PTY carries the cookie (the PTY helper passes it in the launch)', async () => {
    const leaks = scope('pty');
    const p = spawnProcess('sh', ['-c', 'echo $$; exec sleep 605'], { pty: true });
    onTestFinished(() => p.close().then(() => {}));
    const pid = await printedPid(() => p.output().replace(/\r/g, ''));
    await vi.waitFor(
      () =>
        expect(findCookieProcesses(leaks.cookie)?.map((x) => x.argv)).toContainEqual([
          'sleep',
          '605',
        ]),
      { timeout: 10_000, interval: 10 },
    );
    const report = await leaks.check();
    expect(foundAndKilled(report, pid).argv).toEqual(['sleep', '605']);
  });

  it('LK-01 LK-07 thirty leaked processes: all found and killed, the block shows twenty and says how many more', async () => {
    const leaks = scope('thirty');
    const pids: number[] = [];
    for (let i = 0; i < 30; i += 1) {
      const child = spawn('sleep', ['608'], { stdio: 'ignore', detached: true });
      child.unref();
      pids.push(child.pid as number);
      killAtEnd(child.pid as number);
    }
    const report = await leaks.check();
    for (const pid of pids) foundAndKilled(report, pid);
    const text = sanitize.format(report);
    expect(text.split('\n').filter((line) => line.startsWith('  process  sleep 608'))).toHaveLength(
      20,
    );
    expect(text).toContain(
      '  … and 10 more processes, not shown (SHIMKIT_LEAKS_JSON=path writes every one)',
    );
    expect(text).toContain('left 30 things behind');
  });

  it('LK-04 a test that faked the timers and left them faked: check() still settles, kills and returns on real time', async () => {
    const leaks = scope('fake timers');
    vi.useFakeTimers();
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const p = spawnProcess('sh', ['-c', 'trap "" TERM; echo $$; exec sleep 609']);
    const pid = await printedPid(() => p.output());
    void p.close(); // SIGTERM (ignored), then SIGKILL after a grace period: a faked timer
    const report = await leaks.check();
    const found = foundAndKilled(report, pid);
    expect(found.killedNotAwaited).toBe(true);
    expect(report.settledMs).toBeGreaterThanOrEqual(report.settleMs - 1);
    expect(report.ms).toBeLessThan(report.settleMs + 4000); // no 5 s dispose limit waited out
  });

  it("LK-01 what a test process SIGKILLed before its check left is killed by the next process's first scope, with a warning", async () => {
    const dist = new URL('../../dist/index.js', import.meta.url).href;
    // Any process's first scope sweeps the whole machine: one started meanwhile (another
    // test's runner fixture) may take A's orphan before B. Then it is gone all the same,
    // and the pair runs again, until B is the one that finds it (3 tries).
    let out = '';
    let pid = 0;
    for (let attempt = 0; attempt < 3 && !out.startsWith('SHIMKIT_LEAKS_ORPHANS'); attempt += 1) {
      // A: opens a scope, leaves a sleep in a session of its own, and is SIGKILLed.
      const a = await runCommand(process.execPath, [
        '--input-type=module',
        '-e',
        `import { spawn } from 'node:child_process';
         import { sanitize } from ${JSON.stringify(dist)};
         sanitize.begin('a');
         const sleep = spawn('sleep', ['610'], { stdio: 'ignore', detached: true });
         console.log(sleep.pid);
         process.kill(process.pid, 'SIGKILL');`,
      ]);
      expect(a.signal).toBe('SIGKILL');
      pid = Number(a.stdout.toString().trim());
      killAtEnd(pid);
      // Exec'd (or swept already by another process).
      await vi.waitFor(() => expect(readArgv(pid)).not.toEqual(['node']), {
        timeout: 10_000,
        interval: 10,
      });
      // B: its first scope finds it by A's cookie (A is gone), kills it and warns.
      const b = await runCommand(process.execPath, [
        '--input-type=module',
        '-e',
        `import { sanitize } from ${JSON.stringify(dist)};
         const deadline = setTimeout(() => console.log('no warning within 10 s'), 10000);
         process.once('warning', (w) => {
           clearTimeout(deadline);
           console.log(w.code + '\\n' + w.message);
         });
         await sanitize.begin('b').check();`,
      ]);
      out = b.stdout.toString();
      expect(isAlive(pid)).toBe(false);
    }
    expect(out).toMatch(/^SHIMKIT_LEAKS_ORPHANS\n/);
    expect(out).toMatch(
      new RegExp(
        `^ {2}sleep 610 \\(pid ${pid}\\) ← init \\(pid 1\\): its parent is gone .*\\(cookie \\d+-\\d+-[0-9a-f]+-1\\)$`,
        'm',
      ),
    );
    expect(isAlive(pid)).toBe(false);
  });

  it('LK-01 nothing is reported when nothing leaked, and the scope restores process.env', async () => {
    const before = process.env.SHIMKIT_LEAK_COOKIE;
    const leaks = sanitize.begin('clean');
    expect(process.env.SHIMKIT_LEAK_COOKIE).toBe(leaks.cookie);
    const r = await run('sh', ['-c', 'printf %s "$SHIMKIT_LEAK_COOKIE"'], { timeoutMs: 10_000 });
    expect(r.stdout).toBe(leaks.cookie); // what it ran carried it, and ended
    const report = await sanitize.check();
    expect(report).toMatchObject({ scanned: true, processes: [], killed: [], remaining: [] });
    expect(sanitize.format(report)).toBe('');
    expect(process.env.SHIMKIT_LEAK_COOKIE).toBe(before);
    expect(await leaks.check()).toBe(report); // checked once
    // With no scope open, check() says so. This suite runs under the sanitizer, whose scope
    // for this test is open here: a fresh copy of the module has none.
    vi.resetModules();
    const fresh = await import('../../src/leaks/sanitize.js');
    await expect(fresh.sanitize.check()).rejects.toThrow(/no open scope/);
  });

  it('LK-01 cookies are unique per scope, and a nested scope finds only its own processes', async () => {
    const outer = scope('outer');
    const inner = sanitize.begin('inner');
    expect(inner.cookie).not.toBe(outer.cookie);
    expect(inner.cookie).toMatch(new RegExp(`^${process.pid}-\\d+-[0-9a-f]{8}-\\d+$`));
    const r = await run('sh', ['-c', escapee('sleep 604')], {
      timeoutMs: 10_000,
    });
    const pid = Number(r.stdout.trim());
    killAtEnd(pid);
    expect(findCookieProcesses(outer.cookie)?.map((x) => x.pid)).not.toContain(pid);
    const report = await inner.check();
    foundAndKilled(report, pid);
    expect(process.env.SHIMKIT_LEAK_COOKIE).toBe(outer.cookie);
    expect((await outer.check()).processes).toEqual([]);
  });
});

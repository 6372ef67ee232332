import { describe, expect, it, onTestFinished } from 'vitest';
import {
  ProcessExitedError,
  run,
  spawnProcess,
  type TestProcess,
  WaitTimeoutError,
} from '../../src/index.js';
import { procStat } from '../../src/process/kill.js';
import { isAlive } from '../helpers/index.js';
import { expectFlatMemoryUnderOutput } from '../helpers/sized.js';

const node = process.execPath;

/** A TestProcess that is closed when the test ends, whatever happened. */
function spawned(...args: Parameters<typeof spawnProcess>): TestProcess {
  const p = spawnProcess(...args);
  onTestFinished(async () => {
    await p.close({ graceMs: 0 });
  });
  return p;
}

/** The pids a shell printed, one per line. */
function pidsIn(text: string): number[] {
  return [...text.matchAll(/^pid=(\d+)$/gm)].map((m) => Number(m[1]));
}

describe('TestProcess lifecycle', () => {
  it('SP-04 spawns into its own process group; close() ends the child and its background grandchildren', async () => {
    const p = spawned('sh', ['-c', 'sleep 1000 & echo pid=$!; sleep 1000 & echo pid=$!; wait']);
    await p.waitForOutput(/(pid=\d+\n){2}/);
    const grandchildren = pidsIn(p.output());
    expect(grandchildren).toHaveLength(2);

    // Its own group, led by the child, apart from the test's group.
    expect(procStat(p.pid)?.pgid).toBe(p.pid);
    expect(procStat(process.pid)?.pgid).not.toBe(p.pid);
    for (const pid of grandchildren) expect(procStat(pid)?.pgid).toBe(p.pid);

    const exit = await p.close();

    expect(exit).toMatchObject({ exitCode: null, signal: 'SIGTERM' });
    expect(p.running).toBe(false);
    for (const pid of [p.pid, ...grandchildren]) expect(isAlive(pid)).toBe(false);
  });

  it('SP-04 a child that ignores SIGTERM is SIGKILLed after graceMs, grandchild and all', async () => {
    const script = `
      process.on('SIGTERM', () => console.log('ignored SIGTERM'));
      const { spawn } = require('node:child_process');
      const child = spawn('sh', ['-c', 'trap "" TERM; while :; do read x; done'], { stdio: ['pipe', 'ignore', 'ignore'] });
      console.log('pid=' + child.pid);
      setInterval(() => {}, 1000);`;
    const p = spawned(node, ['-e', script]);
    await p.waitForOutput(/pid=\d+\n/);
    const [grandchild] = pidsIn(p.output());

    // A grace long enough for the child to be scheduled and log that it ignored SIGTERM.
    const exit = await p.close({ graceMs: 1500 });

    expect(exit.signal).toBe('SIGKILL');
    expect(p.output()).toContain('ignored SIGTERM'); // SIGTERM came first
    expect(isAlive(p.pid)).toBe(false);
    expect(isAlive(grandchild as number)).toBe(false);
  });

  it('SP-04 close() after the child exited still ends what it left running in its group', async () => {
    // The shell exits at once; its background sleep keeps stdout open.
    const p = spawned('sh', ['-c', 'sleep 1000 & echo pid=$!'], { drainMs: 100 });
    const waited = await p.wait();
    expect(waited).toMatchObject({ timedOut: false, exitCode: 0 });
    const [leftover] = pidsIn(p.stdout.tail());
    expect(isAlive(leftover as number)).toBe(true);

    const exit = await p.close();

    expect(exit.exitCode).toBe(0);
    expect(isAlive(leftover as number)).toBe(false);
    expect(await p.close()).toBe(exit); // idempotent
  });
});

describe('signals', () => {
  it('SP-04 kill(signal) signals the whole group, as Ctrl-C in a terminal does', async () => {
    const p = spawned(
      'sh',
      ['-c', 'trap "echo got SIGINT; exit 130" INT; echo working; sleep 1000 & wait'],
      { drainMs: 100 },
    ); // the background sleep holds stdout open
    await p.waitForOutput('working');

    expect(p.kill('SIGINT')).toBe(true);

    expect(await p.wait({ timeoutMs: 10_000 })).toMatchObject({ exitCode: 130 });
    expect(p.stdout.tail()).toBe('working\ngot SIGINT\n');
    await p.close(); // the background sleep ignores SIGINT (as in any non-interactive shell)
    expect(p.kill('SIGINT')).toBe(false); // nothing left to signal
    expect(() => p.kill('INT' as NodeJS.Signals)).toThrow(
      'Expected the signal of TestProcess(sh -c',
    );
  });

  it('SP-04 kill("SIGINT") on a program without a handler: it is ended by the signal (the kill() example)', async () => {
    const p = spawned(node, ['-e', "console.log('up'); setInterval(() => {}, 1000);"]);
    await p.waitForOutput('up');

    p.kill('SIGINT');

    expect(await p.wait({ timeoutMs: 5000 })).toMatchObject({ exitCode: null, signal: 'SIGINT' });
  });
});

describe('output()', () => {
  it('SP-05 output() holds both streams in arrival order, each stream in its own order', async () => {
    const p = spawned('sh', ['-c', 'echo a; echo b >&2; echo c']);
    await p.wait();

    // Two pipes: "b" may come before or after "c", never out of its stream's order.
    expect(['a\nb\nc\n', 'a\nc\nb\n', 'b\na\nc\n']).toContain(p.output());
    expect(p.stdout.tail()).toBe('a\nc\n');
    expect(p.stderr.tail()).toBe('b\n');
  });
});

describe('bounded output', () => {
  it('SP-05 keeps the last tailBytes of each stream and counts the dropped bytes exactly', async () => {
    // 100,000 numbered lines on stdout (588,890 bytes), a short stderr.
    const script = `
      let out = '';
      for (let i = 0; i < 100000; i++) out += i + '\\n';
      process.stdout.write(out);
      process.stderr.write('only this\\n');`;
    const p = spawned(node, ['-e', script], { tailBytes: 1000 });
    await p.wait();

    let expected = '';
    for (let i = 0; i < 100000; i++) expected += `${i}\n`;
    expect(p.stdout.totalBytes).toBe(expected.length);
    expect(p.stdout.droppedBytes).toBe(expected.length - 1000);
    expect(p.stdout.tail()).toBe(expected.slice(-1000));
    expect(p.stdout.bytes()).toEqual(Buffer.from(expected.slice(-1000)));
    expect(p.stderr.tail()).toBe('only this\n');
    expect(p.stderr.droppedBytes).toBe(0);
  });

  it('SP-05 a tail cut inside a UTF-8 character starts at the next whole character', async () => {
    const p = spawned(node, ['-e', "process.stdout.write('é'.repeat(1000) + 'end')"], {
      tailBytes: 8, // 'end' + 5 bytes of 'é': the cut falls inside one
    });
    await p.wait();
    expect(p.stdout.tail()).toBe('éé' + 'end');
    expect(p.stdout.droppedBytes).toBe(2003 - 8);
  });

  // 1 GiB of it is in process.stress.test.ts.
  it('SP-05 memory stays flat while the child writes 256 MiB to stdout', () =>
    expectFlatMemoryUnderOutput(256));
});

describe('deadlines', () => {
  it('SP-06 wait({ timeoutMs }) reports timedOut and leaves the process running', async () => {
    const p = spawned('cat', []);

    const first = await p.wait({ timeoutMs: 100 });

    expect(first).toEqual({ timedOut: true });
    expect(p.running).toBe(true);
    expect(isAlive(p.pid)).toBe(true);
    p.end(); // cat sees end of file and exits on its own
    expect(await p.wait({ timeoutMs: 10_000 })).toMatchObject({
      timedOut: false,
      exitCode: 0,
      signal: null,
    });
  });

  it('SP-06 run() past its deadline closes the tree and reports timedOut with what arrived', async () => {
    const r = await run(
      'sh',
      ['-c', 'echo started; echo oops >&2; sleep 1000 & echo pid=$!; wait'],
      {
        timeoutMs: 1000,
      },
    );

    expect(r).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGTERM' });
    expect(r.stdout).toMatch(/^started\npid=\d+\n$/);
    expect(r.stderr).toBe('oops\n');
    for (const pid of pidsIn(r.stdout)) expect(isAlive(pid)).toBe(false);
  });

  it('SP-06 run() drains for a bounded time when an escaped grandchild holds the output open', async () => {
    // setsid puts the sleep in a new session, out of reach of the group kill;
    // it keeps stdout open, yet run() returns after the bounded drain.
    const r = await run('sh', ['-c', 'setsid sleep 1000 & echo pid=$!'], { drainMs: 200 });
    const [escaped] = pidsIn(r.stdout);
    onTestFinished(() => {
      if (escaped && isAlive(escaped)) process.kill(escaped, 'SIGKILL');
    });

    expect(r).toMatchObject({ exitCode: 0, timedOut: false });
    expect(escaped).toBeGreaterThan(0);
  });

  it('SP-06 run() returns exit code and output of a normal exit without throwing', async () => {
    const r = await run('sh', ['-c', 'printf out; printf err >&2; exit 3'], { input: 'ignored' });
    expect(r).toMatchObject({
      exitCode: 3,
      signal: null,
      stdout: 'out',
      stderr: 'err',
      timedOut: false,
      stdoutDroppedBytes: 0,
    });
    expect(r.command).toBe('sh -c "printf out; printf err >&2; exit 3"');
  });

  it('SP-06 run() feeds input and closes stdin', async () => {
    const r = await run('sort', [], { input: 'b\na\nc\n' });
    expect(r.stdout).toBe('a\nb\nc\n');
  });

  it('SP-06 waitForOutput resolves on output split across chunks', async () => {
    // The child writes "rea", then "dy" only after the test answers: two chunks for sure.
    const script = `process.stdout.write('rea');
      process.stdin.once('data', () => { process.stdout.write('dy\\n'); process.exit(0); });`;
    const p = spawned(node, ['-e', script]);
    await p.waitForOutput('rea');
    expect(p.output()).toBe('rea');
    p.write('go\n');

    const match = await p.waitForOutput(/re(a)dy/, { timeoutMs: 10_000 });

    expect(match[0]).toBe('ready');
    expect(match[1]).toBe('a');
  });

  it('SP-06 waitForOutput rejects with the output tail on timeout, the process untouched', async () => {
    const p = spawned('sh', ['-c', 'echo warming up; exec cat']);
    await p.waitForOutput('warming');

    const error = await p.waitForOutput(/ready/, { timeoutMs: 150 }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(WaitTimeoutError);
    expect((error as Error).message).toBe(
      'TestProcess(sh -c "echo warming up; exec cat").waitForOutput(): no output matched /ready/ within 150 ms. Last output:\nwarming up\n',
    );
    expect(p.running).toBe(true);
  });

  it('SP-06 waitForOutput rejects with the exit status and tail when the process exits first', async () => {
    const p = spawned('sh', ['-c', 'echo giving up >&2; exit 2']);

    const error = await p.waitForOutput(/ready/, { stream: 'stdout' }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ProcessExitedError);
    expect(error).toMatchObject({ exitCode: 2, signal: null, code: 'ERR_SHIMKIT_PROCESS_EXITED' });
    expect((error as Error).message).toBe(
      `sh -c "echo giving up >&2; exit 2" (pid ${p.pid}) exited with code 2 before its output matched /ready/. It wrote no stdout.`,
    );
  });
});

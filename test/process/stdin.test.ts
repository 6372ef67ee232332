import { describe, expect, it, onTestFinished } from 'vitest';
import { ProcessExitedError, spawnProcess, type TestProcess } from '../../src/index.js';
// Not on the public door yet (src/index.ts is edited elsewhere).
import { StdinNotWritableError } from '../../src/process/errors.js';

function spawned(...args: Parameters<typeof spawnProcess>): TestProcess {
  const p = spawnProcess(...args);
  onTestFinished(async () => {
    await p.close({ graceMs: 0 });
  });
  return p;
}

/** What `fn` threw (or, for a promise, rejected with). */
async function thrown(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected it to throw');
}

/** A node child that reads stdin to its end, says "eof", and stays up until closed. */
const READS_TO_EOF = [
  '-e',
  "process.stdin.resume(); process.stdin.on('end', () => console.log('eof')); setInterval(() => {}, 1000);",
];

describe('input that cannot arrive is an error, not a silent loss', () => {
  it('SP-08 write(), end(), respond() and send() after the process exited throw ProcessExitedError', async () => {
    const p = spawned('sh', ['-c', 'echo bye; exit 3']);
    await p.wait();

    const error = await thrown(() => p.write('too late\n'));

    expect(error).toBeInstanceOf(ProcessExitedError);
    expect(error).toMatchObject({ code: 'ERR_SHIMKIT_PROCESS_EXITED', exitCode: 3, signal: null });
    expect((error as Error).message).toBe(
      `sh -c "echo bye; exit 3" (pid ${p.pid}) exited with code 3 before write() was called, so the input cannot reach it. Last output:\nbye\n`,
    );
    for (const [what, call] of [
      ['end()', () => p.end()],
      ['respond()', () => p.respond('?', 'y\n')],
      ['send()', () => p.send(['y\n'])],
    ] as const) {
      const e = await thrown(call);
      expect(e, what).toBeInstanceOf(ProcessExitedError);
      expect((e as Error).message, what).toContain(`exited with code 3 before ${what} was called`);
    }
  });

  it('SP-08 a process killed by a signal says so when written to', async () => {
    const p = spawned('cat', []);
    p.kill('SIGKILL');
    await p.wait();

    expect(() => p.write('x')).toThrow(
      `cat (pid ${p.pid}) was killed by SIGKILL before write() was called, so the input cannot reach it. It wrote no output.`,
    );
  });

  it('SP-08 stdin: "ignore" makes write() a usage error that says how to spawn with a pipe', async () => {
    const p = spawned('cat', [], { stdin: 'ignore' });

    const error = await thrown(() => p.write('x'));

    expect(error).toBeInstanceOf(StdinNotWritableError);
    expect(error).toMatchObject({ code: 'ERR_SHIMKIT_STDIN_NOT_WRITABLE', state: 'not-a-pipe' });
    expect((error as Error).message).toBe(
      "TestProcess(cat).write() cannot send input: the process was spawned with `stdin: 'ignore'`, so its stdin is not a pipe. " +
        "Spawn it with `stdin: 'pipe'` (the default) to use write(), end(), respond() and send().",
    );
    expect(() => p.end()).toThrow(
      "TestProcess(cat).end() cannot send input: the process was spawned with `stdin: 'ignore'`",
    );
    expect(() => p.respond('?', 'y\n')).toThrow(StdinNotWritableError);
    await expect(p.send(['y\n'])).rejects.toThrow(StdinNotWritableError);
    expect(p.running).toBe(true); // it did start
  });

  it('SP-08 write() after end() says stdin was closed by end(); end() again does nothing', async () => {
    const p = spawned(process.execPath, READS_TO_EOF);
    p.write('a\n');
    p.end();
    p.end();

    const error = await thrown(() => p.write('b\n'));

    expect(error).toBeInstanceOf(StdinNotWritableError);
    expect(error).toMatchObject({ state: 'closed' });
    expect((error as Error).message).toMatch(
      /^TestProcess\(.*\)\.write\(\) cannot send input: stdin was already closed by end\(\)\. Write everything before closing stdin\.$/,
    );
    await p.waitForOutput('eof');
  });

  it('SP-08 write() after send() or after the `stdin` input names what closed stdin', async () => {
    const sent = spawned(process.execPath, READS_TO_EOF);
    await sent.send(['a\n'], { idleMs: 0 });
    await sent.waitForOutput('eof');
    expect(() => sent.write('b\n')).toThrow(
      'cannot send input: stdin was already closed by send(). Write everything before closing stdin (or pass `end: false` to send()).',
    );
    expect(() => sent.respond('?', 'y\n')).toThrow(StdinNotWritableError);

    const given = spawned(process.execPath, READS_TO_EOF, { stdin: 'all of it\n' });
    await given.waitForOutput('eof');
    expect(() => given.write('more\n')).toThrow(
      "cannot send input: stdin was already closed after the input given as the `stdin` option. To write more, spawn it with `stdin: 'pipe'` (the default) and write the input with write().",
    );
  });
});

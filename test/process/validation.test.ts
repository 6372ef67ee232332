import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  CommandNotFoundError,
  InvalidOptionError,
  run,
  StdinNotWritableError,
  spawnProcess,
} from '../../src/index.js';
import { DEFAULT_WAIT_MS } from '../../src/internal/limits.js';
import { resolveRunTimeout, resolveWaitForOutputOptions } from '../../src/process/options.js';
import { testDir } from '../helpers/index.js';

describe('bad input', () => {
  it('SP-04 a command that does not exist rejects with the command and the PATH searched, each dir once', async () => {
    const dir = testDir();
    const a = join(dir, 'a');
    const b = join(dir, 'b');
    mkdirSync(a);
    mkdirSync(b);

    const error = await run('deploy', [], { env: { PATH: `${a}:${b}:${a}:${b}` }, cwd: dir }).catch(
      (e: unknown) => e,
    );

    expect(error).toBeInstanceOf(CommandNotFoundError);
    expect(error).toMatchObject({
      code: 'ERR_SHIMKIT_COMMAND_NOT_FOUND',
      searched: [a, b],
      notExecutable: [],
    });
    expect((error as Error).message).toBe(
      `Command not found: "deploy" is not an executable file in any PATH dir (searched ${a}, ${b}; cwd ${dir}). ` +
        'Check the name, pass an absolute path, or put its dir first on PATH (sandbox.use(dir) or the `env` option).',
    );
    expect(() => spawnProcess('./nope', [], { cwd: dir })).toThrow(
      `Command not found: "./nope" is not an executable file in any PATH dir (searched ${dir}; cwd ${dir}).`,
    );
  });

  it('SP-04 a file on PATH without the exec bit is named, with the chmod that fixes it', async () => {
    const dir = testDir();
    const a = join(dir, 'a');
    const b = join(dir, 'b c');
    mkdirSync(a);
    mkdirSync(b);
    writeFileSync(join(b, 'deploy'), '#!/bin/sh\n', { mode: 0o644 }); // there, but not executable

    const error = await run('deploy', [], { env: { PATH: `${a}:${b}` }, cwd: dir }).catch(
      (e: unknown) => e,
    );

    expect(error).toBeInstanceOf(CommandNotFoundError);
    expect(error).toMatchObject({ searched: [a, b], notExecutable: [join(b, 'deploy')] });
    expect((error as Error).message).toBe(
      `Command not found: "deploy" is not an executable file in any PATH dir (searched ${a}, ${b}; cwd ${dir}). ` +
        `${b}/deploy exists but is not executable: run \`chmod +x '${b}/deploy'\` to make it so, or pass the path of an executable file.`,
    );

    writeFileSync(join(a, 'deploy'), '#!/bin/sh\n', { mode: 0o600 });
    expect(() => spawnProcess('deploy', [], { env: { PATH: `${a}:${b}` }, cwd: dir })).toThrow(
      `${a}/deploy, ${b}/deploy exist but are not executable: make the one you mean executable, e.g. \`chmod +x ${a}/deploy\`.`,
    );
  });

  it.each([
    [
      { timeoutMs: -1 },
      'Expected the `timeoutMs` option of run("true") to be a positive integer of milliseconds up to 2147483647, got -1 (number).',
    ],
    [
      { timeoutMs: 1.5 },
      'Expected the `timeoutMs` option of run("true") to be a positive integer of milliseconds up to 2147483647, got 1.5 (number).',
    ],
    [
      { graceMs: '1s' },
      'Expected the `graceMs` option of run("true") to be an integer of milliseconds up to 2147483647, got "1s" (string).',
    ],
    [
      { drainMs: -5 },
      'Expected the `drainMs` option of run("true") to be an integer of milliseconds up to 2147483647, got -5 (number).',
    ],
    [
      { tailBytes: -1 },
      'Expected the `tailBytes` option of run("true") to be an integer number of bytes from 0 to 1 GiB, got -1 (number).',
    ],
    [
      { timeout: 5 },
      'Unknown option `timeout` for run("true"). Did you mean `timeoutMs`? Valid options: sandbox, cwd, env, tailBytes, graceMs, drainMs, timeoutMs, input, pty.',
    ],
    [
      { input: 5 },
      'Expected the `input` option of run("true") to be a string or bytes, got 5 (number).',
    ],
    [
      { cwd: '/no/such/dir' },
      'The `cwd` of run("true") is not an existing dir: /no/such/dir. Create it first, or leave `cwd` out to use process.cwd().',
    ],
  ])('SP-06 run() rejects bad options with their name: %j', async (options, message) => {
    const error = await run('true', [], options as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as Error).message).toBe(message);
  });

  it('SP-06 wait(), close() and waitForOutput() reject bad deadlines with the option name', async () => {
    const p = spawnProcess('cat', []);
    onTestFinished(async () => {
      await p.close({ graceMs: 0 });
    });
    await expect(p.wait({ timeoutMs: -1 })).rejects.toThrow(
      'Expected the `timeoutMs` option of TestProcess(cat).wait() to be an integer of milliseconds up to 2147483647, got -1 (number).',
    );
    expect(() => p.close({ graceMs: 2.5 })).toThrow(
      'Expected the `graceMs` option of TestProcess(cat).close() to be an integer of milliseconds up to 2147483647, got 2.5 (number).',
    );
    expect(() => p.waitForOutput('x', { timeoutMs: 0 })).toThrow(
      'Expected the `timeoutMs` option of TestProcess(cat).waitForOutput() to be a positive integer of milliseconds up to 2147483647, got 0 (number).',
    );
    expect(() => p.waitForOutput(/x*/)).toThrow(
      'The pattern /x*/ of TestProcess(cat).waitForOutput() matches empty text, so it would match at once; make it require at least one character.',
    );
    expect(() => p.waitForOutput('x', { stream: 'both' as never })).toThrow(
      'Expected the `stream` option of TestProcess(cat).waitForOutput() to be "stdout", "stderr" or "all", got "both" (string).',
    );
  });

  it('SP-04 spawnProcess() rejects a bad command line, stdin mode and env at once', () => {
    expect(() => spawnProcess('', [])).toThrow(
      'Expected the command of spawnProcess() to be a non-empty string without NUL, got "" (string).',
    );
    expect(() => spawnProcess('true', 'x' as never)).toThrow(
      'Expected the arguments of spawnProcess("true") to be an array of strings, got "x" (string).',
    );
    expect(() => spawnProcess('true', [], { stdin: 3 as never })).toThrow(
      'Expected the `stdin` option of spawnProcess("true") to be "pipe", "ignore" or "inherit", or the input as a string or bytes, got 3 (number).',
    );
    expect(() => spawnProcess('true', [], { env: { A: 1 as never } })).toThrow(
      'Expected the `env.A` option of spawnProcess("true") to be a string or undefined, got 1 (number).',
    );
    const p = spawnProcess('true', [], { stdin: 'ignore' });
    onTestFinished(async () => {
      await p.close();
    });
    expect(() => p.write('x')).toThrow(StdinNotWritableError);
    expect(() => p.respond('?', 'y\n')).toThrow("spawned with `stdin: 'ignore'`");
  });
});

describe('command lookup follows Node', () => {
  it('SP-04 without PATH the default path is searched; an empty PATH finds nothing', async () => {
    const r = await run('ls', ['/'], { env: { PATH: undefined } });
    expect(r.exitCode).toBe(0);
    expect(() => spawnProcess('ls', [], { env: { PATH: '' } })).toThrow(
      'Command not found: "ls" is not an executable file in any PATH dir (searched nothing: PATH is empty;',
    );
  });
});

describe('default deadlines', () => {
  it('SP-06 run(), waitForOutput() and send() default to 4000 ms, below the 5 s test timeout of vitest and jest', async () => {
    expect(DEFAULT_WAIT_MS).toBe(4000);
    expect(resolveRunTimeout(undefined, 'git')).toBe(4000);
    expect(resolveWaitForOutputOptions('x', undefined, 'w').timeoutMs).toBe(4000);

    // Hung programs under the defaults: shimkit's own result and message, before 5 s.
    const p = spawnProcess('cat', []);
    onTestFinished(async () => {
      await p.close({ graceMs: 0 });
    });
    const started = performance.now();
    const [r, error] = await Promise.all([
      run('sleep', ['1000']),
      p.waitForOutput('never').catch((e: unknown) => e),
    ]);

    expect(r).toMatchObject({ timedOut: true, signal: 'SIGTERM' });
    expect((error as Error).message).toBe(
      'TestProcess(cat).waitForOutput(): no output matched never within 4000 ms. It wrote no output.',
    );
    // Both ended at their 4 s defaults, not at some later bound (slack for a loaded machine).
    expect(performance.now() - started).toBeLessThan(7000);
  });
});

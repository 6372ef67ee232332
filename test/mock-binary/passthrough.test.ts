// Passthrough and spies (MB-15): the real command runs behind the mock, with
// the same argv, stdio and ending, and every call is recorded.
import { execFileSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import {
  createMockBinary,
  InvalidOptionError,
  InvalidResponseError,
  MockExitCode,
} from '../../src/index.js';
import { realSpawn } from '../../src/runner/passthrough.js';
import { completion, isAlive, runCommand, spawnTracked, testDir } from '../helpers/index.js';
import { treeTool } from '../helpers/tree.js';

/** A "real" command named `name` in a dir of its own: prints its args, echoes stdin to stderr, exits as asked. */
function realTool(name: string): string {
  // The exit code comes from EXIT_CODE (set to 0 below unless a test sets it).
  const dir = testDir();
  const file = join(dir, name);
  writeFileSync(
    file,
    [
      '#!/bin/sh',
      'printf "real:%s\\n" "$@"',
      'if [ "$1" = stdin ]; then cat >&2; fi',
      'if [ "$1" = signal ]; then kill -TERM $$; fi',
      'exit "$EXIT_CODE"',
      '',
    ].join('\n'),
  );
  chmodSync(file, 0o755);
  return dir;
}

describe('passthrough and spies', () => {
  it('MB-15 a spy runs the real git --version with the same output and exit code, and records the call', async () => {
    const real = execFileSync('git', ['--version'], { encoding: 'utf8' });
    await using git = createMockBinary('git', { spy: true });
    const r = await runCommand('git', ['--version'], { env: git.env() });
    expect(r.code).toBe(0);
    expect(r.stdout.toString()).toBe(real);
    expect(git.lastCall()).toMatchObject({
      argv: ['--version'],
      responseSource: 'passthrough',
      exitCode: 0,
      status: 'exited',
    });
  });

  it('MB-15 argv, stdin, stdout, stderr, exit code and signal pass through as they are', async () => {
    const dir = realTool('tool');
    await using tool = createMockBinary('tool', { spy: true });
    const env = tool.env({ ...process.env, PATH: `${dir}:/usr/bin:/bin`, EXIT_CODE: '0' });
    const args = ['stdin', 'a b', '', '-n', 'ü\n"q"'];
    const r = await runCommand('tool', args, { env, input: 'piped in\n' });
    expect(r.stdout.toString()).toBe(`${args.map((a) => `real:${a}`).join('\n')}\n`);
    expect(r.stderr.toString()).toBe('piped in\n');
    expect((await runCommand('tool', ['x'], { env: { ...env, EXIT_CODE: '7' } })).code).toBe(7);
    expect(await runCommand('tool', ['signal'], { env })).toMatchObject({
      code: null,
      signal: 'SIGTERM',
    });
    expect(tool.calls().map((c) => [c.exitCode, c.signal])).toEqual([
      [0, undefined],
      [7, undefined],
      [undefined, 'SIGTERM'],
    ]);
  });

  it('MB-15 passthrough: true on one response; the others stay scripted; captured stdin still reaches the real command', async () => {
    const dir = realTool('tool');
    await using tool = createMockBinary('tool', {
      stdin: 'capture',
      onExhausted: 'fail',
      responses: [
        { match: { args: ['deploy'] }, stdout: 'scripted\n' },
        { match: { argsPrefix: ['stdin'] }, passthrough: true },
      ],
    });
    const env = tool.env({ ...process.env, PATH: `${dir}:/usr/bin:/bin`, EXIT_CODE: '0' });
    expect((await runCommand('tool', ['deploy'], { env })).stdout.toString()).toBe('scripted\n');
    const r = await runCommand('tool', ['stdin'], { env, input: 'recorded and passed\n' });
    expect(r.stdout.toString()).toBe('real:stdin\n');
    expect(r.stderr.toString()).toBe('recorded and passed\n');
    expect(tool.lastCall()?.stdin).toBe('recorded and passed\n');
  });

  it('MB-15 no recursion: the shim dir twice on PATH, or another mock of the same name before the real one', async () => {
    const dir = realTool('tool');
    await using outer = createMockBinary('tool', { spy: true });
    await using inner = createMockBinary('tool', { spy: true });
    const env = {
      ...process.env,
      PATH: `${outer.dir}:${outer.dir}:${inner.dir}:${dir}:/usr/bin:/bin`,
    };
    const r = await runCommand('tool', ['once'], { env });
    expect(r.stdout.toString()).toBe('real:once\n');
    expect(outer.callCount()).toBe(1);
    expect(inner.callCount()).toBe(0); // skipped, not run: it is a shim too
  });

  it('MB-15 with no real command behind it, the call says so and exits 127', async () => {
    await using ghost = createMockBinary('no-such-real-tool-x', { spy: true });
    const r = await runCommand('no-such-real-tool-x', ['a'], { env: ghost.env() });
    expect(r.code).toBe(127);
    expect(r.stderr.toString()).toMatch(
      /^shimkit: mock "no-such-real-tool-x" call #1 \(no-such-real-tool-x a\) passes through to the real no-such-real-tool-x, but there is none on PATH after the mock \(searched .*\)\. Install it, or script this call instead of passing it through\.\n$/,
    );
    expect(ghost.lastCall()?.status).toBe('failed');
  });

  it('MB-15 spy and passthrough are checked: no scripted output with passthrough, no onExhausted or strict with spy', () => {
    expect(() =>
      createMockBinary('git', { responses: [{ passthrough: true, stdout: 'x' }] }),
    ).toThrow(InvalidResponseError);
    expect(() =>
      createMockBinary('git', { responses: [{ passthrough: true, exitCode: 1 }] }),
    ).toThrow(
      "sets `passthrough` with `exitCode`: the real command's output and exit code are what the call gets",
    );
    expect(() => createMockBinary('git', { spy: true, strict: true })).toThrow(InvalidOptionError);
    expect(() => createMockBinary('git', { spy: true, onExhausted: 'fail' })).toThrow(
      '`spy: true` cannot take `onExhausted`',
    );
  });

  it('MB-15 the real command gets all of stdin even past stdinLimitBytes; the record keeps the limit', async () => {
    const dir = realTool('tool');
    await using tool = createMockBinary('tool', {
      spy: true,
      stdin: 'capture',
      stdinLimitBytes: 10,
    });
    const env = tool.env({ ...process.env, PATH: `${dir}:/usr/bin:/bin`, EXIT_CODE: '0' });
    const input = 'x'.repeat(100_000);
    const r = await runCommand('tool', ['stdin'], { env, input });
    expect(r.stderr.toString()).toBe(input);
    expect(tool.lastCall()).toMatchObject({ stdin: 'xxxxxxxxxx', stdinTruncated: true });
  });

  it('MB-15 MB-06 a real command ended by SIGPIPE (which Node ignores) ends the call by SIGPIPE too: a pipefail script sees 141, the record says SIGPIPE', async () => {
    await using yes = createMockBinary('yes', { spy: true });
    const script = 'set -o pipefail; yes | head -c 3 >/dev/null; echo "status $?"';
    const r = await runCommand('bash', ['-c', script], { env: yes.env() });
    expect(r.stdout.toString()).toBe('status 141\n');
    await yes.waitForCalls(1);
    expect(yes.lastCall()).toMatchObject({
      status: 'exited',
      exitCode: undefined,
      signal: 'SIGPIPE',
    });
  });

  it('MB-15 MB-11 a passthrough that times out ends with its whole tree: a grandchild holding stdout is killed, so the caller reaches EOF at the deadline', async () => {
    // The real command starts a grandchild that holds its stdout for 30 s and
    // writes its pid down; killing only the direct child leaves the caller's
    // $(…) open until the grandchild ends.
    const { dir, env: pids, tree } = treeTool('stdout');
    await using tool = createMockBinary('tool', { spy: true, timeoutMs: 1000 });
    const env = tool.env({ ...process.env, PATH: `${dir}:/usr/bin:/bin`, ...pids });
    const started = Date.now();
    const caller = runCommand('sh', ['-c', 'out=$(tool run); echo "status $? out $out"'], { env });
    let giveUp: NodeJS.Timeout | undefined;
    const r = await Promise.race([
      caller,
      new Promise<never>((_, reject) => {
        giveUp = setTimeout(
          () => reject(new Error('the caller was still waiting after 10 s')),
          10_000,
        );
      }),
    ]).finally(() => clearTimeout(giveUp));
    const elapsed = Date.now() - started;
    expect(r.stdout.toString()).toBe(`status ${MockExitCode.timeout} out started\n`);
    expect(elapsed).toBeLessThan(10_000); // the sleep would hold it 30 s
    expect(tool.lastCall()).toMatchObject({ status: 'timed-out', exitCode: MockExitCode.timeout });
    expect(tool.lastCall()?.diagnostic).toContain(
      'while the real command it passes through to ran',
    );
    expect(tree()).toHaveLength(2);
    await vi.waitFor(() => expect(tree().filter(isAlive)).toEqual([]), { timeout: 5000 });
  });

  it('MB-15 SIGTERM sent to a spy call reaches the real command too, and the call ends as the real command ended: by SIGTERM', async () => {
    const { dir, env: pids, tree } = treeTool('stdout');
    await using tool = createMockBinary('tool', { spy: true, timeoutMs: 20_000 });
    const env = tool.env({ ...process.env, PATH: `${dir}:/usr/bin:/bin`, ...pids });
    const call = spawnTracked('tool', ['run'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
    const ended = completion(call);
    await vi.waitFor(() => expect(tree()).toHaveLength(2), { timeout: 10_000 });
    const [real] = tree() as [number, number];
    process.kill(call.pid as number, 'SIGTERM');
    expect(await ended).toMatchObject({ code: null, signal: 'SIGTERM' });
    await vi.waitFor(() => expect(isAlive(real)).toBe(false), { timeout: 5000 });
    expect(tool.lastCall()).toMatchObject({ status: 'exited', signal: 'SIGTERM' });
  });

  it('MB-15 a relative PATH entry such as "." never sends the real command back to the shim', async () => {
    const dir = realTool('tool');
    await using tool = createMockBinary('tool', { spy: true, timeoutMs: 5000 });
    const env = { ...process.env, PATH: `${tool.dir}:.:/usr/bin:/bin`, EXIT_CODE: '0' };
    const r = await runCommand('tool', ['once'], { env, cwd: dir });
    expect(r.stdout.toString()).toBe('real:once\n');
    expect(tool.callCount()).toBe(1);
  });
});

describe('passthrough to a real command on Windows (with an injected platform)', () => {
  it('MB-15 PX-14 a real .cmd runs through cmd.exe, named by its full path (never found again on PATH); an .exe and POSIX commands run as they are', () => {
    const cmd = realSpawn('C:\\tools\\rpc-server.cmd', ['--stdio', 'a b'], 'win32');
    expect(cmd.args).toEqual([
      '/d',
      '/s',
      '/v:off',
      '/c',
      '""C:\\tools\\rpc-server.cmd" ^"--stdio^" ^"a^ b^""',
    ]);
    expect(cmd.windowsVerbatimArguments).toBe(true);
    expect(realSpawn('C:\\Git\\git.exe', ['a b'], 'win32')).toEqual({
      file: 'C:\\Git\\git.exe',
      args: ['a b'],
      windowsVerbatimArguments: false,
    });
    expect(realSpawn('/usr/bin/git', ['a b'], 'linux')).toEqual({
      file: '/usr/bin/git',
      args: ['a b'],
      windowsVerbatimArguments: false,
    });
  });
});

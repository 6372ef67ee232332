// The shim's shell never shows through (MB-20, MB-06): the caller's shell
// settings (SHELLOPTS, exported functions) cannot change what a mock prints,
// and a call records the env its caller passed, not the PWD, SHLVL or PATH
// the shim's own shell added — run by dash, bash and busybox sh.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { createMockBinary, run } from '../../src/index.js';
import { testDir } from '../helpers/index.js';

const hasBusybox = spawnSync('busybox', ['true']).status === 0;
/** The shells a shim may be run by (the first word of each is looked up on PATH). */
const SHELLS: Array<[string, string[]]> = [
  ['dash', ['dash']],
  ['bash', ['bash']],
  ['bash --posix (bash as /bin/sh)', ['bash', '--posix']],
  ...(hasBusybox ? [['busybox sh', ['busybox', 'sh']] as [string, string[]]] : []),
];

/** Run `shim args` by `shell` with exactly `env` (env -i), as a caller that passes only that. */
function callWith(shell: string[], shim: string, args: string[], env: Record<string, string>) {
  const pairs = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  const r = spawnSync('/usr/bin/env', ['-i', ...pairs, ...shell, shim, ...args], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The same, not blocking this process (a handler in it answers the call). */
function callAsync(shell: string[], shim: string, env: Record<string, string>): Promise<string> {
  const pairs = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  const child = spawn('/usr/bin/env', ['-i', ...pairs, ...shell, shim], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  return new Promise((resolve) => child.on('close', () => resolve(out)));
}

/** Functions named like special builtins, or not a name: bash in POSIX mode will not import them and says so (its own rule, before any script). */
const SPECIAL = ['exit', 'exec', 'unset', 'set', '['].map((name) => `BASH_FUNC_${name}%%`);

const HOSTILE: Record<string, string> = {
  SHELLOPTS: 'xtrace:errexit:nounset:allexport:noclobber:noglob',
  'BASH_FUNC_exit%%': '() { echo hijacked exit; }',
  'BASH_FUNC_exec%%': '() { echo hijacked exec; }',
  'BASH_FUNC_unset%%': '() { echo hijacked unset; }',
  'BASH_FUNC_set%%': '() { echo hijacked set; }',
  'BASH_FUNC_printf%%': '() { echo hijacked printf; }',
  'BASH_FUNC_[%%': '() { echo hijacked test; }',
};

describe('the shim under a hostile shell', () => {
  for (const fastPath of [true, false]) {
    it.each(SHELLS)(
      `MB-20 SHELLOPTS and exported functions never change what the mock prints (%s, ${fastPath ? 'sh fast path' : 'runner'})`,
      async (_label, shell) => {
        await using git = createMockBinary('git', {
          fastPath,
          // (`times` or `match` would make every call the runner's)
          responses: [{ stdout: 'main\n', stderr: 'note\n', exitCode: 3 }],
        });
        const env: Record<string, string> = { ...HOSTILE, HOME: '/nonexistent' };
        if (shell.includes('--posix')) for (const name of SPECIAL) delete env[name];
        const r = callWith(shell, git.path, ['status', '*'], env);
        expect(r).toEqual({ code: 3, stdout: 'main\n', stderr: 'note\n' });
        expect(git.calls().map((c) => [c.argv, c.exitCode])).toEqual([[['status', '*'], 3]]);
      },
    );
  }

  it.each(SHELLS)(
    "MB-06 a call records the env its caller passed, not what the shim's shell added (%s)",
    async (_label, shell) => {
      await using git = createMockBinary('git', { recordEnv: true });
      const r = callWith(shell, git.path, ['status'], { FOO: '1', NODE_OPTIONS: '--no-warnings' });
      expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
      expect(git.lastCall()?.env).toEqual({ FOO: '1', NODE_OPTIONS: '--no-warnings' });
      // What the caller did pass comes through as it was, SHLVL included.
      callWith(shell, git.path, ['status'], { FOO: '2', SHLVL: '7', PWD: '/stale' });
      expect(git.lastCall()?.env).toEqual({ FOO: '2', SHLVL: '7', PWD: '/stale' });
    },
  );

  it.each(SHELLS)(
    'MB-06 of two env entries of one name the last counts, on the sh path and in the runner alike, as in the shell that runs the shim (%s)',
    async (_label, shell) => {
      // Node writes each key as `key=value`: the key `FOO=b` makes a second FOO entry, `FOO=b=`.
      const env = { PATH: process.env.PATH ?? '', FOO: 'a', 'FOO=b': '' };
      for (const fastPath of [true, false]) {
        await using git = createMockBinary('git', {
          fastPath,
          recordEnv: ['FOO'],
          responses: [
            { match: { env: { FOO: 'b=' } }, stdout: 'last\n', times: 'always' },
            { stdout: 'first\n', times: 'always' },
          ],
        });
        const [file, ...args] = shell as [string, ...string[]];
        const r = spawnSync(file, [...args, git.path], { env, encoding: 'utf8', timeout: 30_000 });
        expect([r.status, r.stdout, r.stderr]).toEqual([0, 'last\n', '']);
        expect(git.lastCall()?.env).toEqual({ FOO: 'b=' });
      }
    },
  );

  it('MB-06 a recordEnv list naming PWD, SHLVL and PATH records only what the caller passed', async () => {
    await using git = createMockBinary('git', { recordEnv: ['PWD', 'SHLVL', 'PATH', 'FOO'] });
    for (const [, shell] of SHELLS) {
      callWith(shell, git.path, [], { FOO: '1' });
      expect(git.lastCall()?.env).toEqual({ FOO: '1' });
    }
  });

  it('MB-13 match.env, and a handler of a mock that records env, see the env the caller passed: no PWD where the caller gave none', async () => {
    await using git = createMockBinary('git', {
      responses: [
        { match: { env: { PWD: /./ } }, stdout: 'saw a PWD\n', times: 'always' },
        { stdout: 'no PWD\n', times: 'always' },
      ],
    });
    for (const [, shell] of SHELLS) {
      expect(callWith(shell, git.path, [], { FOO: '1' }).stdout).toBe('no PWD\n');
      expect(callWith(shell, git.path, [], { PWD: '/' }).stdout).toBe('saw a PWD\n');
    }
    // A handler sees the exact env where the mock records env (else what the shell passed on).
    await using gh = createMockBinary('gh', { recordEnv: ['FOO'] });
    const seen: Array<Record<string, string>> = [];
    gh.handle((call) => {
      seen.push(call.env);
      return { stdout: 'live\n' };
    });
    expect(await callAsync(['bash'], gh.path, { FOO: '1' })).toBe('live\n');
    expect(seen).toEqual([{ FOO: '1' }]);
  });

  it.each(SHELLS)(
    "MB-15 MB-16 a passthrough a handle() or release() asks for runs the real command with the env the caller passed, not the shim's shell's (%s)",
    async (_label, shell) => {
      const dir = testDir();
      symlinkSync('/usr/bin/env', join(dir, 'tool')); // the real tool prints its env
      await using tool = createMockBinary('tool');
      tool.handle(() => ({ passthrough: true }));
      const env = { FOO: '1', PATH: `${dir}:/usr/bin:/bin` };
      const handled = (await callAsync(shell, tool.path, env)).split('\n').sort();
      tool.handle(undefined);
      const hold = tool.hold();
      const held = callAsync(shell, tool.path, env);
      await hold.waitReceived();
      hold.release({ passthrough: true });
      for (const lines of [handled, (await held).split('\n').sort()]) {
        // The leak sanitizer's vars (on for this suite) are the caller's too: left out here.
        expect(
          lines.filter(
            (l) => !l.startsWith('SHIMKIT_PASSED_THROUGH=') && !l.startsWith('SHIMKIT_LEAK_'),
          ),
        ).toEqual(['', 'FOO=1', `PATH=${dir}:/usr/bin:/bin`]);
      }
    },
  );

  it('MB-06 SEC-03 a SHIMKIT_CALLER_ENV the caller sets is never read or deleted: through the sh shim, and by the runner as the Windows shim starts it', async () => {
    await using git = createMockBinary('git', { recordEnv: true });
    const victim = join(testDir(), 'victim');
    writeFileSync(victim, 'FAKE=1\0');
    const env = { FOO: '1', SHIMKIT_CALLER_ENV: victim };
    expect(callWith(['sh'], git.path, ['a'], env).code).toBe(0);
    // The Windows shim runs `node runner.cjs <state> args` with the caller's env as it is.
    const runner = fileURLToPath(new URL('../../dist/runner.cjs', import.meta.url));
    const direct = spawnSync(process.execPath, [runner, git.stateDir, 'b'], {
      env,
      encoding: 'utf8',
    });
    expect(direct.status).toBe(0);
    expect(existsSync(victim)).toBe(true);
    expect(git.calls().map((c) => [c.argv, c.env?.FAKE])).toEqual([
      [['a'], undefined],
      [['b'], undefined],
    ]);
  });

  it("MB-18 a call made in another pid namespace still waits for its hold (the test process's pid means nothing there)", async (context) => {
    const probe = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']);
    if (probe.status !== 0) {
      context.skip('unshare --pid is not allowed here (it needs root or user namespaces)');
    }
    await using gh = createMockBinary('gh');
    const hold = gh.hold();
    let ended = false;
    const call = run('unshare', ['--pid', '--fork', '--mount-proc', gh.path], {
      env: gh.env(),
      timeoutMs: 30_000,
    }).finally(() => {
      ended = true;
    });
    await hold.waitReceived({ timeoutMs: 10_000 });
    // It checks the test process every ~50 ms while it waits: a few of those go by.
    const since = Date.now();
    await vi.waitFor(() => expect(Date.now() - since).toBeGreaterThan(300), {
      timeout: 5000,
      interval: 25,
    });
    expect(ended).toBe(false);
    hold.release({ stdout: 'answered\n' });
    const r = await call;
    expect({ code: r.exitCode, stdout: r.stdout, stderr: r.stderr }).toEqual({
      code: 0,
      stdout: 'answered\n',
      stderr: '',
    });
  });

  it('SEC-01 reset() drops the env copies of calls killed before their runner read them (each is a whole env)', async () => {
    await using git = createMockBinary('git', { recordEnv: true });
    // Where a killed call leaves it: <state>/.env.<its pid>.
    const dead = spawnSync('true').pid as number;
    const stale = join(git.stateDir, `.env.${dead}`);
    const running = join(git.stateDir, `.env.${process.pid}`);
    writeFileSync(stale, 'SECRET=1\0', { mode: 0o600 });
    writeFileSync(running, 'SECRET=2\0', { mode: 0o600 });
    git.reset();
    expect([existsSync(stale), existsSync(running)]).toEqual([false, true]);
  });
});

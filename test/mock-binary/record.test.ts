import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMockBinary, MockExitCode } from '../../src/index.js';
import { completion, runCommand, spawnTracked, testDir } from '../helpers/index.js';

const TRICKY_ARGS = [
  '-n',
  '-e',
  '--',
  '',
  ' ',
  'two words',
  "it's",
  '"double"',
  '$HOME',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal ${…} argument is the point
  '${PATH}',
  '`uname`',
  '$(id)',
  'line1\nline2',
  '\ttab\t',
  '\r\n',
  'ünïcödé ✓ 日本語 🚀',
  '*',
  '?',
  '[a-z]',
  '~',
  '\\',
  '%PATH%',
  '!bang',
  ';',
  '&&',
  '|',
  '>out',
  '-',
  '--help',
];

describe('call records', () => {
  it('MB-06 records argv exactly: -n, -e, --, empty strings, spaces, quotes, $HOME, backticks, newlines, tabs, unicode', async () => {
    await using tool = createMockBinary('tool');
    // Through a real shell too: the caller's quoting must survive the shim unchanged.
    const r = await runCommand(tool.path, TRICKY_ARGS);
    expect(r.code).toBe(0);
    expect(tool.lastCall()?.argv).toEqual(TRICKY_ARGS);
    const viaSh = await runCommand('sh', ['-c', `"${tool.path}" "$@"`, 'sh', ...TRICKY_ARGS]);
    expect(viaSh.code).toBe(0);
    expect(tool.lastCall()?.argv).toEqual(TRICKY_ARGS);
  });

  it('REL-02 MB-06 argv round-trips through the shim for arbitrary strings (property)', async () => {
    await using tool = createMockBinary('tool');
    const arg = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 12 }),
      fc.constantFrom(...TRICKY_ARGS),
      fc.string({ unit: 'grapheme', maxLength: 6 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          arg.filter((s) => !s.includes('\0')),
          { maxLength: 6 },
        ),
        async (argv) => {
          const r = await runCommand(tool.path, argv);
          expect(r.code).toBe(0);
          expect(tool.lastCall()?.argv).toEqual(argv);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('MB-06 records the exact bytes of arguments that are not valid UTF-8', async () => {
    await using tool = createMockBinary('tool');
    // \377\376 and a lone continuation byte: no valid UTF-8 decoding exists.
    const r = await runCommand('sh', [
      '-c',
      'exec "$0" "$(printf "a\\377\\376b")" "ok ✓" "$(printf "\\200")" ""',
      tool.path,
    ]);
    expect(r.code).toBe(0);
    const call = tool.lastCall();
    expect(call?.argv).toEqual(['a\uFFFD\uFFFDb', 'ok ✓', '\uFFFD', '']);
    expect(call?.argvBytes).toEqual([
      Buffer.from([0x61, 0xff, 0xfe, 0x62]),
      Buffer.from('ok ✓'),
      Buffer.from([0x80]),
      Buffer.alloc(0),
    ]);
    await runCommand(tool.path, ['plain', 'ünï']);
    expect(tool.lastCall()?.argvBytes).toEqual([Buffer.from('plain'), Buffer.from('ünï')]);
  });

  it('MB-06 records cwd, pid, ppid, start and end time, the response and the exit code', async () => {
    const cwd = testDir();
    await using tool = createMockBinary('tool', { responses: [{ exitCode: 4, delayMs: 50 }] });
    const before = Date.now();
    const r = await runCommand(tool.path, ['a'], { cwd });
    const after = Date.now();
    const call = tool.lastCall();
    expect(call).toMatchObject({
      index: 1,
      argv: ['a'],
      cwd,
      pid: r.pid, // the shim execs the runner: same process
      ppid: process.pid,
      status: 'exited',
      response: 1,
      responseSource: 'queue',
      exitCode: 4,
    });
    // A call the sh shim served has its times from the file system's clock
    // (the record's birth and change times), which runs in kernel ticks and
    // may read a few ms behind Date.now() (seen: 3 ms; README "Static responses").
    const fsClock = process.env.SHIMKIT_FAST_PATH === '0' ? 0 : 10;
    expect(call?.startedAt).toBeGreaterThanOrEqual(before - fsClock);
    expect(call?.endedAt).toBeLessThanOrEqual(after);
    expect((call?.endedAt ?? 0) - (call?.startedAt ?? 0)).toBeGreaterThanOrEqual(50 - fsClock);
  });

  it('MB-06 records the env keys asked for, exactly', async () => {
    await using git = createMockBinary('git', {
      recordEnv: ['GIT_DIR', 'MISSING', 'GITHUB_TOKEN'],
    });
    await runCommand(git.path, [], {
      env: { ...process.env, GIT_DIR: '/repo/.git', GITHUB_TOKEN: 'ghp_x' },
    });
    expect(git.lastCall()?.env).toEqual({ GIT_DIR: '/repo/.git', GITHUB_TOKEN: 'ghp_x' });
  });

  it('MB-06 recordEnv: true records all env vars with secret-looking values redacted', async () => {
    await using git = createMockBinary('git', { recordEnv: true });
    const env = {
      PATH: process.env.PATH,
      PLAIN: 'visible',
      AWS_SECRET_ACCESS_KEY: 'abc',
      NPM_TOKEN: 'npm_1',
      DB_PASSWORD: 'hunter2',
      HTTP_AUTHORIZATION: 'Bearer x',
      api_key: 'k',
    };
    await runCommand(git.path, [], { env });
    const recorded = git.lastCall()?.env ?? {};
    expect(recorded.PLAIN).toBe('visible');
    for (const key of [
      'AWS_SECRET_ACCESS_KEY',
      'NPM_TOKEN',
      'DB_PASSWORD',
      'HTTP_AUTHORIZATION',
      'api_key',
    ]) {
      expect(recorded[key], key).toBe('[redacted]');
    }
    expect(Object.keys(recorded).some((k) => k.startsWith('SHIMKIT_'))).toBe(false);
  });

  it('MB-06 MB-20 recordEnv: true also redacts PAT, PASSWD, PASSPHRASE, COOKIE, SESSION, CREDENTIAL, PRIVATE names and URL userinfo', async () => {
    await using git = createMockBinary('git', { recordEnv: true });
    const env = {
      PATH: process.env.PATH ?? '',
      GITHUB_PAT: 'ghp_1',
      DB_PASS: 'p',
      PASSWD: 'p2',
      GPG_PASSPHRASE: 'pp',
      COOKIE: 'c',
      SESSION_ID: 's',
      GOOGLE_APPLICATION_CREDENTIALS: '/secret.json',
      PRIVATE_THING: 'x',
      DATABASE_URL: 'postgres://u:hunter2@db.example:5432/app',
      PATTERN: 'not a secret',
      PATHS: 'also not',
    };
    await runCommand(git.path, [], { env });
    const recorded = git.lastCall()?.env ?? {};
    for (const key of [
      'GITHUB_PAT',
      'DB_PASS',
      'PASSWD',
      'GPG_PASSPHRASE',
      'COOKIE',
      'SESSION_ID',
      'GOOGLE_APPLICATION_CREDENTIALS',
      'PRIVATE_THING',
    ]) {
      expect(recorded[key], key).toBe('[redacted]');
    }
    expect(recorded.DATABASE_URL).toBe('postgres://db.example:5432/app');
    expect(JSON.stringify(recorded)).not.toContain('hunter2');
    expect([recorded.PATH, recorded.PATTERN, recorded.PATHS]).toEqual([
      env.PATH,
      'not a secret',
      'also not',
    ]);
  });

  it('MB-06 stdin: "capture" answers a caller that keeps stdin open and writes nothing (execFile)', async () => {
    await using git = createMockBinary('git', {
      stdin: 'capture',
      timeoutMs: 20_000, // so the timeout is not what ends it
      responses: [{ stdout: 'answered\n' }],
    });
    const execFileAsync = promisify(execFile);
    const { stdout } = await execFileAsync(git.path, ['status']);
    expect(stdout).toBe('answered\n');
    expect(git.lastCall()).toMatchObject({
      status: 'exited',
      stdin: '',
      stdinOpen: true,
      stdinTruncated: false,
    });
  });

  it('MB-06 stdin: "capture" keeps what came before the caller went quiet, and all of it when the caller closes', async () => {
    await using tool = createMockBinary('tool', { stdin: 'capture', responses: [{}, {}] });
    const child = spawnTracked(tool.path, ['interactive']);
    const done = completion(child);
    child.stdin?.write('first line\n'); // and stdin stays open
    expect((await done).code).toBe(0);
    expect(tool.lastCall()).toMatchObject({ stdin: 'first line\n', stdinOpen: true });
    await runCommand(tool.path, ['piped'], { input: 'a\n'.repeat(100_000) });
    expect(tool.lastCall()).toMatchObject({ stdin: 'a\n'.repeat(100_000), stdinOpen: false });
  });

  it('MB-06 MB-11 with stdinIdleMs: 0 a capture waits for EOF, and a timeout says it was waiting for stdin', async () => {
    await using tool = createMockBinary('tool', {
      stdin: 'capture',
      stdinIdleMs: 0,
      // Long enough that a busy machine cannot start the runner past it (that reads "started it late").
      timeoutMs: 1500,
    });
    const child = spawnTracked(tool.path, []);
    const r = await completion(child); // stdin stays open
    expect(r.code).toBe(MockExitCode.timeout);
    expect(r.stderr.toString()).toBe(
      `shimkit: mock "tool" call #1 timed out after 1500 ms while waiting for stdin to close; close the call's stdin, or set the mock's stdinIdleMs or timeoutMs.\n`,
    );
    expect(tool.lastCall()).toMatchObject({ status: 'timed-out', exitCode: 124 });
  });

  it('MB-06 records no env by default', async () => {
    await using git = createMockBinary('git');
    await runCommand(git.path);
    expect(git.lastCall()?.env).toBeUndefined();
  });

  it('MB-06 stdin: "capture" records stdin to EOF, capped at stdinLimitBytes', async () => {
    await using tool = createMockBinary('tool', { stdin: 'capture', stdinLimitBytes: 10 });
    await runCommand(tool.path, [], { input: 'héllo\n' });
    expect(tool.lastCall()).toMatchObject({ stdin: 'héllo\n', stdinTruncated: false });
    await runCommand(tool.path, [], { input: Buffer.alloc(100_000, 'z') });
    const last = tool.lastCall();
    expect(last?.stdin).toBe('zzzzzzzzzz');
    expect(last?.stdinTruncated).toBe(true);
    expect(last?.status).toBe('exited');
  });
});

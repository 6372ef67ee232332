import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createMockBinary,
  InvalidOptionError,
  InvalidResponseError,
  MockExitCode,
  type MockResponse,
  ShimkitError,
} from '../../src/index.js';
import { NODE_RUNTIME_VARS } from '../../src/mock-binary/node-env.js';
import { renderWindowsShim } from '../../src/mock-binary/shim.js';
import { oneLine, runCommand, testDir } from '../helpers/index.js';
import { generationDir } from '../helpers/protocol.js';
import {
  expectBigResponsesOutsideTheQueue,
  expectCallersSurviveResetAndDispose,
  expectDisposeAfterKillsLeavesNothing,
} from '../helpers/sized.js';

describe('hostile keys are unknown keys, never crashes', () => {
  const cases: Array<[string, unknown, string]> = [
    ['__proto__ (from JSON)', JSON.parse('{"__proto__":{}}'), '__proto__'],
    ['hasOwnProperty', { hasOwnProperty: 1 }, 'hasOwnProperty'],
    ['isPrototypeOf beside a real field', { isPrototypeOf: 1, stdout: 'hi' }, 'isPrototypeOf'],
    ['constructor', { constructor: 'x' }, 'constructor'],
    ['toString', { toString: 'x' }, 'toString'],
    ['valueOf', { valueOf: 2 }, 'valueOf'],
  ];

  it.each(cases)('MB-20 enqueue() rejects %s as an unknown key', async (_label, response, key) => {
    await using git = createMockBinary('git');
    expect(() => git.enqueue(response as MockResponse)).toThrow(InvalidResponseError);
    expect(() => git.enqueue(response as MockResponse)).toThrow(`Unknown key \`${key}\``);
    expect(git.queuedCount()).toBe(0);
  });

  it('MB-20 inherited properties are not fields: a response whose prototype has stdout prints nothing', async () => {
    await using git = createMockBinary('git');
    git.enqueue(Object.create({ stdout: 'inherited' }) as MockResponse);
    const r = await runCommand(git.path);
    expect([r.code, r.stdout.toString()]).toEqual([0, '']);
  });

  it('MB-20 options with a __proto__ key are rejected by name', () => {
    expect(() => createMockBinary('git', JSON.parse('{"__proto__":{"timeoutMs":1}}'))).toThrow(
      InvalidOptionError,
    );
    expect(() => createMockBinary('git', JSON.parse('{"__proto__":{"timeoutMs":1}}'))).toThrow(
      'Unknown option `__proto__`',
    );
  });

  it.each([
    ['{"__proto__":{}}', '__proto__'],
    ['{"hasOwnProperty":1}', 'hasOwnProperty'],
    ['{"isPrototypeOf":1,"stdout":"hi"}', 'isPrototypeOf'],
  ])(
    'MB-20 the runner rejects the hand-written queue line %s with a one-line diagnostic',
    async (line, key) => {
      await using git = createMockBinary('git');
      const queue = join(generationDir(git), 'queue.jsonl');
      appendFileSync(queue, `${line}\n`);
      const r = await runCommand(git.path);
      expect(r.code).toBe(MockExitCode.broken);
      expect(r.stdout.toString()).toBe('');
      expect(oneLine(r.stderr)).toMatch(
        new RegExp(`^shimkit: Unknown key \`${key}\` in queue line 1\\. .*: ${queue}$`),
      );
      expect(git.lastCall()).toMatchObject({ status: 'failed', exitCode: MockExitCode.broken });
    },
  );
});

/** stderr without the warning a POSIX shell prints when it starts in a deleted dir. */
const shellNoise = (stderr: Buffer) =>
  stderr.toString().replace(/^.*(getcwd\(\) failed|error retrieving current directory).*\n/gm, '');

describe('hostile environments', () => {
  it('MB-20 a call whose cwd was deleted is served and recorded with the path it had', async () => {
    await using git = createMockBinary('git', {
      responses: [{ stdout: 'served\n' }, { writeFiles: { 'rel.txt': 'x' } }],
    });
    const gone = join(testDir(), 'gone');
    mkdirSync(gone);
    const script = 'cd "$1" && rmdir "$1" && exec "$2" status';
    const r = await runCommand('sh', ['-c', script, 'sh', gone, git.path]);
    expect([r.code, r.stdout.toString()]).toEqual([0, 'served\n']);
    // /bin/sh itself (dash, bash) warns about a deleted cwd before the shim's first line runs.
    expect(shellNoise(r.stderr)).toBe('');
    expect(git.lastCall()).toMatchObject({ argv: ['status'], cwd: gone, status: 'exited' });

    // A relative file to write into a deleted dir cannot be written: a clear failure.
    const w = await runCommand('sh', [
      '-c',
      'mkdir "$1" && cd "$1" && rmdir "$1" && exec "$2"',
      'sh',
      gone,
      git.path,
    ]);
    expect(w.code).toBe(MockExitCode.broken);
    expect(oneLine(Buffer.from(shellNoise(w.stderr)))).toMatch(
      /^shimkit: mock "git" call #2 could not write a file: .*ENOENT/,
    );
    expect(git.lastCall()).toMatchObject({ cwd: gone, status: 'failed' });
  });

  it("MB-20 the caller's Node variables change nothing the mock prints or writes, and are recorded as set", async () => {
    const dir = testDir();
    const bomb = join(dir, 'bomb.cjs');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(bomb, 'process.stderr.write("preloaded\\n"); process.exit(99);\n');
    const coverage = join(dir, 'coverage');
    mkdirSync(coverage);
    const callerEnv: Record<string, string> = {
      NODE_OPTIONS: `--require ${bomb}`,
      NODE_DEBUG: 'fs,module,timer,net',
      NODE_DEBUG_NATIVE: 'fs',
      NODE_EXTRA_CA_CERTS: '/nonexistent.pem',
      NODE_V8_COVERAGE: coverage,
      NODE_REDIRECT_WARNINGS: join(dir, 'warnings.txt'),
      NODE_PENDING_DEPRECATION: '1',
      NODE_ICU_DATA: '/nonexistent-icu',
      NODE_PATH: '/nonexistent',
      NODE_NO_WARNINGS: '',
      NODE_TLS_REJECT_UNAUTHORIZED: '0',
    };
    await using git = createMockBinary('git', {
      recordEnv: Object.keys(callerEnv),
      responses: [{ stdout: 'exactly this\n', stderr: 'and this\n', delayMs: 20 }],
    });
    const r = await runCommand(git.path, ['log'], {
      env: { PATH: process.env.PATH, ...callerEnv },
    });
    expect([r.code, r.stdout.toString(), r.stderr.toString()]).toEqual([
      0,
      'exactly this\n',
      'and this\n',
    ]);
    expect(readdirSync(coverage)).toEqual([]);
    expect(existsSync(join(dir, 'warnings.txt'))).toBe(false);
    expect(git.lastCall()?.env).toEqual(callerEnv); // the empty NODE_NO_WARNINGS included
  });

  it('MB-20 every variable `node --help` lists is moved aside by the shim', () => {
    const help = execFileSync(process.execPath, ['--help'], { encoding: 'utf8' });
    const section = help.slice(help.indexOf('Environment variables:'));
    const listed = [...section.matchAll(/^([A-Z][A-Z0-9_]+)\s/gm)].map((m) => m[1] as string);
    expect(listed.length).toBeGreaterThan(10);
    // TZ only sets the time zone of dates, and the runner prints none.
    const missing = listed.filter((v) => v !== 'TZ' && !NODE_RUNTIME_VARS.includes(v));
    expect(missing).toEqual([]);
  });

  it('MB-20 the Windows shim moves the same variables aside with delayed expansion, and turns it off before %*', () => {
    const text = renderWindowsShim({
      name: 'git',
      nodeFlags: [],
      nodePath: 'C:\\node\\node.exe',
      runnerPath: 'C:\\Temp\\shimkit-1\\runner\\runner.cjs',
      stateDir: 'C:\\Temp\\shimkit-1\\state\\git.1',
      shimDir: 'C:\\Temp\\shimkit-1\\node_modules\\.bin',
      root: 'C:\\Temp\\shimkit-1',
    });
    const lines = text.split('\r\n');
    const on = lines.indexOf('setlocal EnableDelayedExpansion');
    const off = lines.indexOf('setlocal DisableDelayedExpansion');
    const run = lines.findIndex((l) => l.endsWith(' %*'));
    expect(on).toBeGreaterThan(0);
    expect(off).toBeGreaterThan(on);
    expect(run).toBeGreaterThan(off);
    for (const v of NODE_RUNTIME_VARS) {
      expect(lines).toContain(
        `if defined ${v} (set "SHIMKIT_MOVED_${v}=!${v}!" & set "${v}=" & set "SHIMKIT_MOVED=!SHIMKIT_MOVED! ${v}")`,
      );
    }
  });
});

// The same checks at full size (50 MiB responses, 69 racing callers, three
// 64-call SIGKILL storms) are in hostile.stress.test.ts.
describe('big queues', () => {
  it('MB-20 large outputs live outside the queue file: eleven 5 MiB responses enqueue, and each call reads only its own', () =>
    expectBigResponsesOutsideTheQueue(5));
});

describe('races with reset() and dispose()', () => {
  it('MB-20 24 callers racing reset() and dispose() succeed or get the clear message, never an unexpected error', () =>
    expectCallersSurviveResetAndDispose(24));
});

describe('dispose() whatever late writers do', () => {
  // A SIGKILLed shim cannot end the sleep of its delay: it ends by itself when the delay is
  // over. (By the test's meta: the runner-only project runs without the sanitizer.)
  const delaysOfKilledCalls = {
    meta: {
      shimkit: {
        leaks: {
          allow: [{ argv: '/bin/sleep', count: 16, reason: 'the delays of SIGKILLed calls' }],
        },
      },
    },
  };
  it(
    'MB-20 dispose() right after callers were SIGKILLed mid-storm (16 calls) succeeds and leaves nothing',
    delaysOfKilledCalls,
    () => expectDisposeAfterKillsLeavesNothing(16),
  );
});

describe('names, lines and numbers at the edges', () => {
  it('MB-20 a name too long for a file name is refused up front', () => {
    expect(() => createMockBinary('g'.repeat(255))).toThrow(InvalidOptionError);
    expect(() => createMockBinary('g'.repeat(255))).toThrow(/255 bytes long, more than the 128/);
    expect(() => createMockBinary('é'.repeat(65))).toThrow(/130 bytes long/);
  });

  it('MB-20 a hand-written queue line without its newline: queuedCount() and assertDone() agree, and the next enqueue completes it', async () => {
    await using git = createMockBinary('git', { responses: [{ stdout: 'a' }] });
    appendFileSync(join(generationDir(git), 'queue.jsonl'), '{"stdout":"b"}');
    expect(git.queuedCount()).toBe(1);
    expect((await runCommand(git.path)).stdout.toString()).toBe('a');
    expect(() => git.assertDone()).not.toThrow();
    git.enqueue({ stdout: 'c' });
    expect(git.queuedCount()).toBe(3);
    expect((await runCommand(git.path)).stdout.toString()).toBe('b');
    expect((await runCommand(git.path)).stdout.toString()).toBe('c');
    git.assertDone();
  });

  it('MB-20 file names with absurd numbers in the state dir are not calls', async () => {
    await using git = createMockBinary('git', { responses: [{ stdout: 'a' }] });
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(generationDir(git), 'calls', '1000000000000000000000.json'), '{}\n');
    await runCommand(git.path);
    expect(git.calls().map((c) => c.index)).toEqual([1]);
  });

  it('MB-19 every error the test process can get is a ShimkitError with a code', async () => {
    const git = createMockBinary('git');
    const { rmSync } = await import('node:fs');
    rmSync(git.stateDir, { recursive: true });
    for (const action of [
      () => git.enqueue({ stdout: 'x' }),
      () => git.calls(),
      () => git.callCount(),
      () => git.queuedCount(),
      () => git.assertDone(),
      () => git.reset(),
    ]) {
      let error: unknown;
      try {
        action();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ShimkitError);
      expect((error as ShimkitError).code).toMatch(/^ERR_SHIMKIT_/);
    }
    await git.dispose();
  });
});

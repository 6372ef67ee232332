import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createMockBinary,
  createMockBinDir,
  InvalidOptionError,
  InvalidResponseError,
  type MockResponse,
} from '../../src/index.js';
import { validateBinaryName } from '../../src/mock-binary/name.js';
import { runCommand, testDir } from '../helpers/index.js';

describe('response validation at enqueue time', () => {
  it('MB-04 rejects an unknown key, naming it and suggesting the nearest valid one', async () => {
    await using git = createMockBinary('git');
    const bad = { ouptut: 'x' } as unknown as MockResponse;
    expect(() => git.enqueue(bad)).toThrow(InvalidResponseError);
    expect(() => git.enqueue(bad)).toThrow(
      'Unknown key `ouptut` in the response passed to enqueue() on mock "git". Did you mean `stdout`? Valid fields: stdout, stderr, stdoutBase64, stderrBase64, exitCode, delayMs, jsonl, writeFiles, match, times, optional, chunks, signal, hang, stdin, exitAfterStdinEof, passthrough.',
    );
    const cases: Array<[string, string]> = [
      ['stdot', 'stdout'],
      ['exitcode', 'exitCode'],
      ['delay', 'delayMs'],
      ['exit', 'exitCode'],
      ['writeFile', 'writeFiles'],
      ['stderrBase46', 'stderrBase64'],
    ];
    for (const [key, suggestion] of cases) {
      expect(() => git.enqueue({ [key]: 1 } as MockResponse)).toThrow(
        `Did you mean \`${suggestion}\`?`,
      );
    }
    expect(() => git.enqueue({ zzzzzzzz: 1 } as MockResponse)).toThrow(
      /^Unknown key `zzzzzzzz` in .*\. Valid fields:/,
    );
  });

  it('MB-04 rejects wrong types and out-of-range values with the field, value and expectation', async () => {
    await using git = createMockBinary('git');
    const cases: Array<[unknown, string]> = [
      [
        { stdout: 42 },
        'Expected the `stdout` field of the response passed to enqueue() on mock "git" to be a string, got 42 (number).',
      ],
      [{ exitCode: 256 }, 'to be an integer from 0 to 255, got 256 (number)'],
      [{ exitCode: -1 }, 'to be an integer from 0 to 255, got -1 (number)'],
      [{ exitCode: 1.5 }, 'to be an integer from 0 to 255, got 1.5 (number)'],
      [{ exitCode: '0' }, 'to be an integer from 0 to 255, got "0" (string)'],
      [{ delayMs: -5 }, 'to be a finite number of milliseconds >= 0, got -5 (number)'],
      [{ delayMs: Number.POSITIVE_INFINITY }, 'got Infinity (number)'],
      [
        { jsonl: 'x' },
        '`jsonl` field of the response passed to enqueue() on mock "git" to be an array of JSON values',
      ],
      [{ jsonl: [() => 1] }, 'to be an array of JSON values'],
      [{ writeFiles: { 'a.txt': 3 } }, 'an object mapping file paths to string contents'],
      [{ stdoutBase64: 'not base64!' }, 'to be a base64 string'],
      [
        { stdout: 'a', stdoutBase64: 'YQ==' },
        'sets both `stdout` and `stdoutBase64`; use one of them.',
      ],
      [
        'just a string',
        'to be an object such as { stdout: "…", exitCode: 0 }, got "just a string" (string)',
      ],
      [null, 'got null'],
      [
        { passthrough: true, stdout: 'x' },
        "sets `passthrough` with `stdout`: the real command's output and exit code are what the call gets",
      ],
    ];
    for (const [response, message] of cases) {
      expect(() => git.enqueue(response as MockResponse), JSON.stringify(response)).toThrow(
        message,
      );
    }
  });

  it('MB-04 enqueues nothing from an array with one bad response, and names its index', async () => {
    await using git = createMockBinary('git');
    expect(() => git.enqueue([{ stdout: 'ok' }, { exitCode: 300 }])).toThrow(
      /`exitCode` field of response \[1\] passed to enqueue\(\)/,
    );
    expect(git.queuedCount()).toBe(0);
  });

  it('MB-04 validates responses given as options when the mock is created', () => {
    expect(() => createMockBinary('git', { responses: [{ stdut: 'x' } as MockResponse] })).toThrow(
      /Did you mean `stdout`\?/,
    );
    expect(() => createMockBinary('git', { onExhausted: { exitCode: 999 } })).toThrow(
      /`onExhausted` response/,
    );
    expect(() => createMockBinary('git', { default: { nope: 1 } as MockResponse })).toThrow(
      /`default` response/,
    );
  });

  it('MB-04 bin.mock() with a bad response writes no shim, so the command is not left on PATH', async () => {
    await using bin = createMockBinDir({ tmpDir: testDir() });
    expect(() =>
      bin.mock('git', { responses: [{ stdout: 1 } as unknown as MockResponse] }),
    ).toThrow(
      /`stdout` field of response \[0\] of the `responses` option of createMockBinary\("git"\)/,
    );
    expect(readdirSync(bin.dir)).toEqual([]);
    expect(bin.mocks()).toEqual([]);
  });

  it('MB-04 MB-20 an inherited toJSON or a throwing getter cannot slip past validation', async () => {
    await using git = createMockBinary('git');
    const sneaky = Object.assign(Object.create({ toJSON: () => ({ stdout: 'x', evil: 1 }) }), {
      stdout: 'ok\n',
    });
    git.enqueue(sneaky);
    expect((await runCommand(git.path)).stdout.toString()).toBe('ok\n');
    const throwing = Object.defineProperty({}, 'stdout', {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });
    expect(() => git.enqueue(throwing as MockResponse)).toThrow(InvalidResponseError);
    expect(() => git.enqueue(throwing as MockResponse)).toThrow(
      /Could not read the response passed to enqueue\(\) on mock "git": Error: boom/,
    );
  });
});

describe('option validation at creation time', () => {
  it('MB-04 rejects bad options naming the option, the value and the accepted set', () => {
    const cases: Array<[object, string | RegExp]> = [
      [
        { timeoutMs: 0 },
        'Expected the `timeoutMs` option of createMockBinary("git") to be a positive integer of milliseconds up to 2147483647, got 0 (number).',
      ],
      [{ timeoutMs: -1 }, /`timeoutMs`.*got -1 \(number\)/],
      [
        { onExhausted: 'explode' },
        'Expected the `onExhausted` option of createMockBinary("git") to be "repeat" or "fail" or a response object, got "explode" (string).',
      ],
      [{ stdin: 'pipe' }, 'to be "capture" or "ignore", got "pipe" (string)'],
      [
        { recordEnv: 'PATH' },
        'to be true, false or an array of env var names, got "PATH" (string)',
      ],
      [{ platform: 'windows' }, /`platform` option .* "win32".*got "windows" \(string\)/],
      [
        { timeoutMS: 5 },
        'Unknown option `timeoutMS` for createMockBinary("git"). Did you mean `timeoutMs`?',
      ],
    ];
    for (const [options, message] of cases) {
      expect(() => createMockBinary('git', options), JSON.stringify(options)).toThrow(message);
      expect(() => createMockBinary('git', options)).toThrow(InvalidOptionError);
    }
  });

  it('MB-04 createMockBinDir() and waitForCalls() options are checked too, with a did-you-mean', async () => {
    expect(() => createMockBinDir({ platfrom: 'linux' } as never)).toThrow(
      'Unknown option `platfrom` for createMockBinDir(). Did you mean `platform`?',
    );
    await using git = createMockBinary('git');
    await expect(git.waitForCalls(1, { tiemout: 300 } as never)).rejects.toThrow(
      'Unknown option `tiemout` for mock "git".waitForCalls(). Did you mean `timeoutMs`?',
    );
    await expect(git.waitForCalls(1, 100 as never)).rejects.toThrow(
      'The second argument of mock "git".waitForCalls() is an options object: pass { timeoutMs: 100 }.',
    );
  });

  it('MB-04 a tmpDir that does not exist is a clear error, not a raw ENOENT', () => {
    const missing = join(testDir(), 'nope');
    for (const make of [
      () => createMockBinary('git', { tmpDir: missing }),
      () => createMockBinDir({ tmpDir: missing }),
    ]) {
      expect(make).toThrow(InvalidOptionError);
      expect(make).toThrow(
        new RegExp(
          `to be an existing directory, got "${missing}", which is not one\\. Create it first`,
        ),
      );
    }
  });

  it('MB-04 a rejected createMockBinary leaves no temp dir behind', () => {
    const parent = testDir();
    expect(() => createMockBinary('git', { tmpDir: parent, timeoutMs: -1 })).toThrow(
      InvalidOptionError,
    );
    expect(() => createMockBinary('a/b', { tmpDir: parent })).toThrow(InvalidOptionError);
    expect(readdirSync(parent)).toEqual([]);
  });
});

describe('binary names', () => {
  it('MB-17 rejects path separators, NUL, control characters, "." and ".."', () => {
    const bad: Array<[unknown, string]> = [
      ['', 'it is empty'],
      ['.', 'it is a directory reference'],
      ['..', 'it is a directory reference'],
      ['bin/git', 'it contains a path separator'],
      ['..\\git', 'it contains a path separator'],
      ['git\0', 'it contains a NUL or control character'],
      ['git\nrm', 'it contains a NUL or control character'],
      [42, 'it must be a string'],
    ];
    for (const [name, why] of bad) {
      expect(() => createMockBinary(name as string)).toThrow(
        `: ${why}. Use a plain command name such as "git".`,
      );
    }
    expect(() => createMockBinary('bin/git')).toThrow(
      'Invalid mock binary name "bin/git" (string): it contains a path separator.',
    );
  });

  it('MB-17 accepts ordinary command names, including dots, dashes and unicode', async () => {
    for (const name of ['git', 'docker-compose', 'python3.11', 'kubectl_v2', 'ünïcode', 'a b']) {
      await using mock = createMockBinary(name);
      expect(existsSync(mock.path)).toBe(true);
    }
  });

  it('MB-17 applies the Windows file-name rules when writing .cmd shims', () => {
    expect(() => validateBinaryName('a:b', 'win32')).toThrow('forbids');
    expect(() => validateBinaryName('what?', 'win32')).toThrow('forbids');
    expect(() => validateBinaryName('CON', 'win32')).toThrow('reserved device name');
    expect(() => validateBinaryName('nul.txt', 'win32')).toThrow('reserved device name');
    expect(() => validateBinaryName('git.', 'win32')).toThrow('trailing dot');
    expect(validateBinaryName('a:b', 'linux')).toBe('a:b');
    expect(validateBinaryName('git', 'win32')).toBe('git');
  });

  it('MB-17 refuses up front a Windows name cmd.exe could not run: non-ASCII, spaces, cmd metacharacters', () => {
    for (const name of ['ünïcode', '日本', 'sp ace', 'tab\tx']) {
      expect(() => validateBinaryName(name, 'win32')).toThrow(
        /printable ASCII without spaces|control/,
      );
    }
    for (const name of ['100%', 'a!b', 'a^b', 'a&b', '(x)', 'a=b', 'a;b', 'a,b']) {
      expect(() => validateBinaryName(name, 'win32')).toThrow(/cmd\.exe treats/);
    }
    for (const name of [
      'git',
      'docker-compose',
      'python3.11',
      'kubectl_v2',
      'x+y',
      'a@1',
      'a#b',
      'a$b',
      'a~1',
    ]) {
      expect(validateBinaryName(name, 'win32')).toBe(name);
    }
    expect(() => createMockBinary('sp ace', { platform: 'win32' })).toThrow(
      /Invalid mock binary name "sp ace"/,
    );
    expect(validateBinaryName('sp ace', 'linux')).toBe('sp ace'); // sh runs it by any name
  });

  it('MB-17 refuses two mocks of the same name in one bin dir', async () => {
    await using bin = createMockBinDir();
    bin.mock('git');
    expect(() => bin.mock('git')).toThrow('This bin dir already has a mock named "git"');
    await using win = createMockBinDir({ platform: 'win32' });
    win.mock('Git');
    expect(() => win.mock('GIT')).toThrow('already has a mock named "GIT"');
  });
});

// Record and replay (MB-24): a spy writes a cassette of the real command's
// calls; a later run replays it as routed responses.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CASSETTE_MODE_VAR,
  createMockBinary,
  InvalidOptionError,
  MockExitCode,
  ShimkitError,
} from '../../src/index.js';
import { runCommand, testDir } from '../helpers/index.js';

describe('record and replay', () => {
  it('MB-24 record real git calls to a cassette, then replay them without git: same output, same exit codes', async () => {
    const dir = testDir();
    const cassette = join(dir, 'git.cassette.json');
    const repo = join(dir, 'repo');
    execFileSync('git', ['init', '-q', '-b', 'main', repo]);
    const script = [
      ['--version'],
      ['-C', repo, 'rev-parse', '--abbrev-ref', 'HEAD'],
      ['-C', repo, 'log'], // fails: no commits yet
    ];

    const recorded: Array<{ code: number | null; stdout: string; stderr: string }> = [];
    {
      const git = createMockBinary('git', { cassette: { path: cassette, mode: 'auto' } });
      for (const args of script) {
        const r = await runCommand('git', args, { env: git.env() });
        recorded.push({ code: r.code, stdout: r.stdout.toString(), stderr: r.stderr.toString() });
      }
      expect(git.calls().every((c) => c.responseSource === 'passthrough')).toBe(true);
      await git.dispose(); // writes the cassette
    }
    expect(recorded[2]?.code).not.toBe(0);
    const file = JSON.parse(readFileSync(cassette, 'utf8'));
    expect(file).toMatchObject({ version: 1, command: 'git' });
    expect(file.calls.map((c: { argv: string[] }) => c.argv)).toEqual(script);

    // Replay, with no real git on PATH at all: auto replays because the cassette exists.
    await using git = createMockBinary('git', { cassette });
    const env = git.env({ PATH: '' });
    for (const [i, args] of script.entries()) {
      const r = await runCommand('git', args, { env });
      expect({ code: r.code, stdout: r.stdout.toString(), stderr: r.stderr.toString() }).toEqual(
        recorded[i],
      );
    }
    // A call that is not in the cassette fails loudly.
    const extra = await runCommand('git', ['push'], { env });
    expect(extra.code).toBe(MockExitCode.unmatched);
    expect(extra.stderr.toString()).toContain(
      `(git push) is not in the cassette ${cassette}: no response fits it`,
    );
    expect(extra.stderr.toString()).toContain(
      'Record it again (SHIMKIT_CASSETTE_MODE=record), or script this call.',
    );
  });

  it('MB-24 SHIMKIT_CASSETTE_MODE switches the mode; replay without a cassette, or a wrong one, is refused', () => {
    const dir = testDir();
    const path = join(dir, 'gh.cassette.json');
    const where = /createMockBinary\("gh"\)/;
    process.env[CASSETTE_MODE_VAR] = 'replay';
    try {
      expect(() => createMockBinary('gh', { cassette: path })).toThrow(
        `there is no cassette to replay at ${path}. Record it first`,
      );
      process.env[CASSETTE_MODE_VAR] = 'lockdown';
      expect(() => createMockBinary('gh', { cassette: path })).toThrow(
        `SHIMKIT_CASSETTE_MODE="lockdown" is not one of 'record', 'replay', 'auto'`,
      );
    } finally {
      delete process.env[CASSETTE_MODE_VAR];
    }
    writeFileSync(path, JSON.stringify({ version: 1, command: 'git', calls: [] }));
    expect(() => createMockBinary('gh', { cassette: path })).toThrow(
      'was recorded for "git", not "gh"',
    );
    writeFileSync(path, '{"not":"a cassette"}');
    expect(() => createMockBinary('gh', { cassette: path })).toThrow(where);
    expect(() => createMockBinary('gh', { cassette: 'relative.json' })).toThrow(InvalidOptionError);
    expect(() =>
      createMockBinary('gh', { cassette: { path, mode: 'record' }, strict: true }),
    ).toThrow('recording a cassette cannot take `strict`');
    expect(existsSync(join(dir, 'other.json'))).toBe(false);
  });

  it('MB-24 a recording with no call writes no cassette; one that cannot be written still removes the mock', async () => {
    const dir = testDir();
    const empty = join(dir, 'empty.cassette.json');
    const git = createMockBinary('git', { cassette: { path: empty, mode: 'record' } });
    await git.dispose();
    expect(existsSync(empty)).toBe(false); // auto records again next time

    writeFileSync(join(dir, 'a-file'), '');
    const blocked = join(dir, 'a-file', 'git.cassette.json'); // its parent is a file
    const gh = createMockBinary('gh', { cassette: { path: blocked, mode: 'record' } });
    await runCommand('gh', ['--version'], { env: gh.env() });
    await expect(gh.dispose()).rejects.toThrow(/ENOTDIR|EEXIST/);
    expect(existsSync(gh.dir)).toBe(false);
  });
});

describe('a malformed cassette', () => {
  const call = { argv: ['status'], stdoutBase64: '', stderrBase64: '', exitCode: 0 };
  const file = (calls: unknown[]) => JSON.stringify({ version: 1, command: 'git', calls });
  const cases: Array<[string, string, string]> = [
    ['not JSON', '{"version": 1, "calls": [', 'is not valid JSON ('],
    [
      'an array',
      '[]',
      'is not a shimkit cassette: expected { "version": 1, "command", "calls": [...] }, got [] (array)',
    ],
    [
      'null',
      'null',
      'is not a shimkit cassette: expected { "version": 1, "command", "calls": [...] }, got null',
    ],
    [
      'calls not an array',
      '{"version":1,"command":"git","calls":{}}',
      'got an object with "version", "command", "calls"',
    ],
    ['no command', '{"version":1,"calls":[]}', 'has no command name: "command" is undefined'],
    [
      'a null call',
      file([null]),
      'has a bad call: calls[0] is null, expected a call { "argv": [...]',
    ],
    [
      'a number for a call',
      file([call, 7]),
      'has a bad call: calls[1] is 7 (number), expected a call',
    ],
    [
      'no argv',
      file([{ stdoutBase64: '' }]),
      'has a bad call: calls[0].argv is missing, expected an array of strings',
    ],
    [
      'argv a string',
      file([{ ...call, argv: 'status' }]),
      'calls[0].argv is "status" (string), expected an array of strings',
    ],
    [
      'a number in argv',
      file([{ ...call, argv: ['log', 3] }]),
      'calls[0].argv[1] is 3 (number), expected a string',
    ],
    [
      'bad base64',
      file([call, { ...call, stdoutBase64: 'not base64!' }]),
      'calls[1].stdoutBase64 is "not base64!" (string), expected a base64 string',
    ],
    [
      'stderr a number',
      file([{ ...call, stderrBase64: 5 }]),
      'calls[0].stderrBase64 is 5 (number), expected a base64 string',
    ],
    [
      'exit code a string',
      file([{ ...call, exitCode: '0' }]),
      'calls[0].exitCode is "0" (string), expected an integer from 0 to 255',
    ],
    [
      'an unknown signal',
      file([{ ...call, exitCode: undefined, signal: 'SIGNOPE' }]),
      'calls[0].signal is "SIGNOPE" (string)',
    ],
  ];

  it('MB-24 every malformed cassette is an InvalidOptionError naming the file, the entry and what to do', () => {
    const dir = testDir();
    for (const [what, content, message] of cases) {
      const path = join(dir, `${what.replaceAll(' ', '-')}.cassette.json`);
      writeFileSync(path, content);
      let error: unknown;
      try {
        createMockBinary('git', { cassette: { path, mode: 'replay' } });
      } catch (e) {
        error = e;
      }
      expect(error, what).toBeInstanceOf(ShimkitError);
      expect(error, what).toBeInstanceOf(InvalidOptionError);
      const text = (error as Error).message;
      expect(text, what).toContain(`createMockBinary("git"): the cassette ${path} `);
      expect(text, what).toContain(message);
      expect(text, what).toContain(
        'Fix that by hand, or delete the file and record it again (SHIMKIT_CASSETTE_MODE=record).',
      );
    }
  });

  it('MB-24 MB-14 recording streams the output: a reader that goes away ends the real command by SIGPIPE, and that call replays', async () => {
    const dir = testDir();
    const cassette = join(dir, 'yes.cassette.json');
    {
      const yes = createMockBinary('yes', { cassette: { path: cassette, mode: 'record' } });
      // `yes` never ends by itself: only the closed pipe ends it (it was buffered for ever).
      const r = await runCommand('sh', ['-c', 'yes | head -c 4'], {
        env: yes.env(),
        timeout: 30_000,
      });
      expect({ code: r.code, stdout: r.stdout.toString() }).toEqual({ code: 0, stdout: 'y\ny\n' });
      expect(yes.lastCall()).toMatchObject({ status: 'exited', signal: 'SIGPIPE' });
      await yes.dispose();
    }
    const file = JSON.parse(readFileSync(cassette, 'utf8'));
    expect(file.calls).toMatchObject([{ argv: [], signal: 'SIGPIPE' }]);
    await using yes = createMockBinary('yes', { cassette });
    const r = await runCommand('bash', ['-c', 'set -o pipefail; yes | head -c 4; echo " $?"'], {
      env: yes.env({ PATH: `${yes.dir}:/usr/bin:/bin` }),
      timeout: 30_000,
    });
    expect(r.stdout.toString()).toBe('y\ny\n 141\n');
  });
});

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

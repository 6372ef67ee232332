// The Windows branches, run on any OS with an injected platform and env.
import { describe, expect, it } from 'vitest';
import { taskkillCommand } from '../../src/process/kill.js';
import { mergeEnv, resolveSpawn } from '../../src/process/options.js';
import { commandCandidates } from '../../src/process/which.js';

describe('Windows', () => {
  it('SP-04 close() on Windows runs taskkill /T /F found through SystemRoot, not PATH', () => {
    expect(taskkillCommand(4242, { SystemRoot: 'D:\\WINNT', Path: 'C:\\mocks' })).toEqual({
      file: 'D:\\WINNT\\System32\\taskkill.exe',
      args: ['/PID', '4242', '/T', '/F'],
    });
    // Env keys are case-insensitive on Windows.
    expect(taskkillCommand(1, { SYSTEMROOT: 'E:\\Windows' }).file).toBe(
      'E:\\Windows\\System32\\taskkill.exe',
    );
    expect(taskkillCommand(1, {}).file).toBe('C:\\Windows\\System32\\taskkill.exe');
  });

  it('SP-04 Windows command lookup: the cwd first, then each Path dir with each PATHEXT extension', () => {
    const env = { Path: 'C:\\mocks;"D:\\Program Files\\Git\\cmd"', PATHEXT: '.EXE;.CMD' };
    expect(commandCandidates('git', env, 'C:\\work', 'win32')).toEqual({
      dirs: ['C:\\mocks', 'D:\\Program Files\\Git\\cmd'],
      files: [
        'C:\\work\\git.EXE',
        'C:\\work\\git.CMD',
        'C:\\mocks\\git.EXE',
        'C:\\mocks\\git.CMD',
        'D:\\Program Files\\Git\\cmd\\git.EXE',
        'D:\\Program Files\\Git\\cmd\\git.CMD',
      ],
    });
    // A dir listed twice (in any case) is searched, and named, once.
    expect(
      commandCandidates(
        'git',
        { ...env, Path: `C:\\mocks;c:\\MOCKS;${env.Path}` },
        'C:\\work',
        'win32',
      ).dirs,
    ).toEqual(['C:\\mocks', 'D:\\Program Files\\Git\\cmd']);
    // A name with its extension is looked up as it is.
    expect(commandCandidates('git.cmd', env, 'C:\\work', 'win32').files).toEqual([
      'C:\\work\\git.cmd',
      'C:\\mocks\\git.cmd',
      'D:\\Program Files\\Git\\cmd\\git.cmd',
    ]);
    expect(commandCandidates('.\\tools\\deploy', env, 'C:\\work', 'win32').files).toEqual([
      'C:\\work\\tools\\deploy.EXE',
      'C:\\work\\tools\\deploy.CMD',
    ]);
  });

  it('SP-04 a missing command on Windows names the Path dirs searched', () => {
    expect(() =>
      resolveSpawn(
        'nope',
        [],
        { env: { Path: 'C:\\a;C:\\b' }, cwd: process.cwd() },
        'spawnProcess',
        'win32',
      ),
    ).toThrow(/Command not found: "nope" .*\(searched C:\\a, C:\\b; cwd /);
  });

  it('SP-01 on Windows an `env` option replaces a var of another casing instead of adding a second', () => {
    const base = { Path: 'C:\\bin', Foo: 'a', Keep: 'k' };
    expect(mergeEnv(base, { PATH: 'D:\\x', FOO: 'b', KEEP: undefined }, 'win32', 'w')).toEqual({
      PATH: 'D:\\x',
      FOO: 'b',
    });
    // POSIX keys are exact.
    expect(mergeEnv({ Path: 'x' }, { PATH: 'y', Path: undefined }, 'linux', 'w')).toEqual({
      PATH: 'y',
    });
  });
});

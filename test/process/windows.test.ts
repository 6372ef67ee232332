// The Windows branches, run on any OS with an injected platform and env.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ProcessNotEndedError } from '../../src/index.js';
import { taskkill, taskkillCommand } from '../../src/process/kill.js';
import { mergeEnv, resolveSpawn } from '../../src/process/options.js';
import { endTree } from '../../src/process/reap.js';
import { commandCandidates } from '../../src/process/which.js';
import { cmdEscape, quoteWindowsArg, windowsSpawn } from '../../src/process/windows-command.js';

/**
 * The MSVC runtime's command-line parser (what node.exe, python.exe and Go
 * programs use), for checking quoteWindowsArg: backslashes are literal
 * unless they precede a quote; 2n backslashes + quote = n backslashes and a
 * quote toggle, 2n+1 = n backslashes and a literal quote.
 */
function parseMsvcrt(line: string): string[] {
  const args: string[] = [];
  let i = 0;
  while (i < line.length) {
    while (line[i] === ' ' || line[i] === '\t') i += 1;
    if (i >= line.length) break;
    let arg = '';
    let quoted = false;
    for (; i < line.length; i += 1) {
      const ch = line[i];
      if (ch === '\\') {
        let n = 0;
        while (line[i] === '\\') {
          n += 1;
          i += 1;
        }
        if (line[i] === '"') {
          arg += '\\'.repeat(Math.floor(n / 2));
          if (n % 2 === 1) arg += '"';
          else quoted = !quoted;
        } else {
          arg += '\\'.repeat(n);
          i -= 1;
        }
      } else if (ch === '"') {
        if (quoted && line[i + 1] === '"') {
          arg += '"';
          i += 1;
        } else quoted = !quoted;
      } else if (!quoted && (ch === ' ' || ch === '\t')) break;
      else arg += ch;
    }
    args.push(arg);
  }
  return args;
}

/** What cmd.exe's second parse (of a batch file's `%*`) or first (of `cmd /c`) does to escaped text: `^x` becomes `x`. */
const unescapeCmd = (text: string) => text.replace(/\^(.)/g, '$1');

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

  it('MB-21 quoteWindowsArg round-trips any argument through the MSVC runtime parser, backslashes included', () => {
    for (const arg of [
      'a\\\\"b',
      'x\\\\',
      'C:\\dir with space\\',
      '',
      '"',
      '\\',
      'end\\"',
      'ü日本',
    ]) {
      expect(parseMsvcrt(quoteWindowsArg(arg))).toEqual([arg]);
    }
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: fc.constantFrom('a', ' ', '\t', '\\', '"', '^', '%', '&') })),
        (args) => {
          expect(parseMsvcrt(args.map(quoteWindowsArg).join(' '))).toEqual(args);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('MB-21 a .cmd under node_modules\\.bin gets its metacharacters escaped twice (it passes %* on), other batch files once', () => {
    const args = ['d"&e', '%PATH%', '!x!', 'a\\\\"b'];
    const shim = windowsSpawn('git', args, 'C:\\t\\node_modules\\.bin\\git.cmd', {
      ComSpec: 'C:\\W\\cmd.exe',
    });
    expect(shim.file).toBe('C:\\W\\cmd.exe');
    expect(shim.windowsVerbatimArguments).toBe(true);
    expect(shim.args.slice(0, 4)).toEqual(['/d', '/s', '/v:off', '/c']);
    const line = (shim.args[4] as string).slice(1, -1); // /s strips the outer quotes
    expect(line.startsWith('"git" ')).toBe(true);
    // cmd /c removes one level of carets, the shim's %* the second; node.exe then parses the rest.
    expect(parseMsvcrt(unescapeCmd(unescapeCmd(line.slice('"git" '.length))))).toEqual(args);
    const bat = windowsSpawn('tool', args, 'C:\\bin\\tool.bat', {});
    expect(bat.file).toBe('cmd.exe');
    expect(
      parseMsvcrt(unescapeCmd((bat.args[4] as string).slice(1, -1)).slice('"tool" '.length)),
    ).toEqual(args);
  });

  it('MB-21 an .exe is spawned directly with the arguments as they are; a command path is quoted unless it holds %', () => {
    expect(windowsSpawn('node', ['a b'], 'C:\\n\\node.exe', {})).toEqual({
      file: 'C:\\n\\node.exe',
      args: ['a b'],
      windowsVerbatimArguments: false,
    });
    const spaced = windowsSpawn('C:/a b/git.cmd', [], 'C:\\a b\\git.cmd', {});
    expect(spaced.args[4]).toBe('""C:\\a b\\git.cmd""');
    const percent = windowsSpawn('C:\\50%\\x.cmd', [], 'C:\\50%\\x.cmd', {});
    expect(percent.args[4]).toBe(`"${cmdEscape('C:\\50%\\x.cmd', 1)}"`);
    expect(cmdEscape('a&b', 2)).toBe('a^^^&b');
  });

  it('SP-04 taskkill that cannot be started is reported, not ignored', async () => {
    const problem = await taskkill(999_999, { SystemRoot: '/nowhere/at/all' });
    expect(problem).toBe(
      '\\nowhere\\at\\all\\System32\\taskkill.exe could not be started (ENOENT)',
    );
  });

  it('SP-04 close() on Windows falls back to ending the child when taskkill fails, and throws when even that fails', async () => {
    const saved = process.env.SystemRoot;
    process.env.SystemRoot = '/nowhere/at/all'; // taskkill cannot start here
    try {
      let running = true;
      const ended = {
        pid: 4242,
        running: () => running,
        terminate: () => {
          running = false;
        },
        commandLine: 'x',
      };
      const warned = new Promise<Error>((resolve) => process.once('warning', resolve));
      await endTree(ended, 'win32', 0);
      expect(running).toBe(false);
      expect((await warned).message).toMatch(
        /x \(pid 4242\) was ended by itself, not with its tree: .*could not be started \(ENOENT\)\. Processes it started may still run/,
      );
      const stuck = { pid: 4243, running: () => true, terminate: () => {}, commandLine: 'y' };
      // A 100 ms reap limit instead of 5 s: the wait is the same code either way.
      await expect(endTree(stuck, 'win32', 0, 100)).rejects.toThrow(ProcessNotEndedError);
    } finally {
      if (saved === undefined) delete process.env.SystemRoot;
      else process.env.SystemRoot = saved;
    }
  }, 20_000);
});

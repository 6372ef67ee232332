// Strict PATH (MB-23): a sandbox that runs only mocked and allowed commands.
import { describe, expect, it } from 'vitest';
import {
  createMockBinary,
  createMockBinDir,
  createSandbox,
  InvalidOptionError,
  run,
} from '../../src/index.js';
import { testDir } from '../helpers/index.js';

describe('strict PATH', () => {
  it('MB-23 a script that calls curl gets "curl is not mocked and not allowed in this sandbox"; mocks and allowed commands run', async () => {
    await using sb = createSandbox({
      tmpDir: testDir(),
      commands: 'mocked-only',
      allow: ['sh', 'cat'],
    });
    await using git = createMockBinary('git', { responses: [{ stdout: 'mocked git\n' }] });
    sb.use(git);
    const script =
      'git status; echo hi | cat; curl -s https://example.invalid; echo "curl exited $?"';
    const r = await run('sh', ['-c', script], { sandbox: sb, timeoutMs: 10_000 });
    expect(r.stdout).toBe('mocked git\nhi\ncurl exited 127\n');
    expect(r.stderr).toBe(
      'shimkit: curl is not mocked and not allowed in this sandbox (commands: "mocked-only"): mock it and sandbox.use() the mock, or add \'curl\' to `allow`.\n',
    );
    expect(sb.refusedCommands()).toEqual(['curl']);
    expect(git.lastCall()?.argv).toEqual(['status']);
  });

  it('MB-23 run() of a refused command reports exit 127 and the message; commands on no host PATH dir are simply not found', async () => {
    await using sb = createSandbox({ tmpDir: testDir(), commands: 'mocked-only' });
    const r = await run('python3', ['-c', 'print(1)'], { sandbox: sb, timeoutMs: 10_000 });
    expect(r.exitCode).toBe(127);
    expect(r.stderr).toContain('shimkit: python3 is not mocked and not allowed in this sandbox');
    await expect(run('no-such-command-anywhere', [], { sandbox: sb })).rejects.toThrow(
      'Command not found',
    );
    expect(sb.refusedCommands()).toEqual(['python3']);
  });

  it('MB-23 the options are checked: allow needs mocked-only, names must be commands that exist, Windows says not yet', () => {
    const tmpDir = testDir();
    expect(() => createSandbox({ tmpDir, allow: ['sh'] })).toThrow(
      "`allow` only means something with `commands: 'mocked-only'`",
    );
    expect(() =>
      createSandbox({ tmpDir, commands: 'mocked-only', allow: ['no-such-tool-x'] }),
    ).toThrow(
      /`allow` names "no-such-tool-x", which is not on the host PATH \(searched .*\)\. Install it, or leave it out of `allow`\./,
    );
    expect(() => createSandbox({ tmpDir, commands: 'mocked-only', allow: ['/bin/sh'] })).toThrow(
      InvalidOptionError,
    );
    expect(() => createSandbox({ tmpDir, commands: 'everything' as never })).toThrow(
      "'host' or 'mocked-only'",
    );
    expect(() => createSandbox({ tmpDir, commands: 'mocked-only', platform: 'win32' })).toThrow(
      'not supported on Windows yet',
    );
  });

  it("MB-23 the strict PATH is the sandbox's two dirs, after the use()d mock dirs", async () => {
    await using sb = createSandbox({ tmpDir: testDir(), commands: 'mocked-only', allow: ['sh'] });
    await using git = createMockBinary('git');
    sb.use(git);
    expect(sb.env().PATH?.split(':')).toEqual([
      git.dir,
      `${sb.root}/allowed`,
      `${sb.root}/refused`,
    ]);
  });

  it('MB-23 git: true still makes the repo with the host git, and a mock added to a used bin dir later is not refused', async () => {
    await using sb = createSandbox({ tmpDir: testDir(), commands: 'mocked-only', git: true });
    await using bin = createMockBinDir();
    sb.use(bin);
    const curl = bin.mock('curl', { responses: [{ stdout: 'mocked curl\n' }] });
    const r = await run('curl', ['-s', 'x'], { sandbox: sb, timeoutMs: 10_000 });
    expect(r.stdout).toBe('mocked curl\n');
    curl.makeUnavailable('ENOENT');
    await expect(run('curl', [], { sandbox: sb })).rejects.toThrow('Command not found');
    expect(sb.refusedCommands()).toEqual([]);
  });
});

// Spawn failures (MB-25): a mock that fails to start as a missing or
// non-executable command does, so callers' ENOENT/EACCES paths get tested.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  CommandNotFoundError,
  createMockBinary,
  createSandbox,
  InvalidOptionError,
  run,
} from '../../src/index.js';
import { testDir } from '../helpers/index.js';

/** What a caller's spawn of `command` gets: the error code, or the exit code. */
function spawnOutcome(command: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(command, ['status'], { env, stdio: 'ignore' });
    child.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    child.once('exit', (code) => resolve(`exit ${code}`));
  });
}

describe('spawn failures', () => {
  it("MB-25 makeUnavailable('ENOENT') makes a caller's spawn fail with ENOENT, and makeAvailable() undoes it", async () => {
    await using git = createMockBinary('git');
    const env = git.env({ PATH: '' }); // the mock dir only: no real git behind it
    expect(await spawnOutcome('git', env)).toBe('exit 0');
    git.makeUnavailable('ENOENT');
    expect(await spawnOutcome('git', env)).toBe('ENOENT');
    git.makeAvailable();
    expect(await spawnOutcome('git', env)).toBe('exit 0');
    expect(git.callCount()).toBe(2); // the failed start is no call
  });

  it("MB-25 makeUnavailable('EACCES') makes it fail as a file without the exec bit does", async () => {
    await using git = createMockBinary('git');
    git.makeUnavailable('EACCES');
    expect(await spawnOutcome('git', git.env({ PATH: '' }))).toBe('EACCES');
    // shimkit's own run() names the file and the chmod that would fix it.
    await expect(run('git', [], { env: git.env({ PATH: '' }) })).rejects.toThrow(
      `${git.path} exists but is not executable`,
    );
    git.makeUnavailable('ENOENT'); // switching moves it aside instead
    expect(await spawnOutcome('git', git.env({ PATH: '' }))).toBe('ENOENT');
  });

  it('MB-25 in a mocked-only sandbox an unavailable mock is not found at all (not refused), though a real git is on the host', async () => {
    await using sb = createSandbox({ tmpDir: testDir(), commands: 'mocked-only', allow: ['sh'] });
    await using git = createMockBinary('git');
    sb.use(git);
    git.makeUnavailable('ENOENT');
    expect(await spawnOutcome('git', sb.env())).toBe('ENOENT');
    await expect(run('git', ['status'], { sandbox: sb })).rejects.toThrow(CommandNotFoundError);
    const r = await run('sh', ['-c', 'git status 2>/dev/null; echo "exit $?"'], {
      sandbox: sb,
      timeoutMs: 10_000,
    });
    expect(r.stdout).toBe('exit 127\n'); // sh: not found
    expect(sb.refusedCommands()).toEqual([]);
    git.makeAvailable();
    expect(await spawnOutcome('git', sb.env())).toBe('exit 0');
  });

  it('MB-25 a bad code, and EACCES on Windows, are refused', async () => {
    await using git = createMockBinary('git');
    expect(() => git.makeUnavailable('EPERM' as never)).toThrow("'ENOENT' (not found) or 'EACCES'");
    await using win = createMockBinary('git', { platform: 'win32', nodePath: 'C:\\node.exe' });
    expect(() => win.makeUnavailable('EACCES')).toThrow(InvalidOptionError);
    win.makeUnavailable('ENOENT');
    expect(win.makeAvailable()).toBe(win);
  });
});

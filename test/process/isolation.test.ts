import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  createMockBinary,
  createSandbox,
  InvalidOptionError,
  run,
  spawnProcess,
} from '../../src/index.js';
import { hostCopyReason } from '../../src/process/isolation.js';
import { testDir } from '../helpers/index.js';

const advice =
  "with `sandbox` it would undo the sandbox's isolation, showing the program the host's home and every host var, secrets included. " +
  'To put a mock on the sandbox PATH, call sandbox.use(mock) instead of passing mock.env(). ' +
  "Pass in `env` only the vars you mean to set (e.g. { CI: '1' }), and a host value you do want with sandbox.setEnv(name, value).";

describe('isolation is never lost silently', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it.skipIf(process.platform === 'win32')(
    "SP-09 run() and spawnProcess() with sandbox and a mock's env() throw, pointing at sandbox.use(mock)",
    async () => {
      vi.stubEnv('SHIMKIT_TEST_SECRET', 'hunter2'); // a host secret that must not leak
      vi.stubEnv('HOME', '/host/home');
      await using sb = createSandbox({ tmpDir: testDir() });
      await using git = createMockBinary('git', { tmpDir: testDir() });

      const error = await run('sh', ['-c', 'echo $HOME $SHIMKIT_TEST_SECRET'], {
        sandbox: sb,
        env: git.env(),
      }).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(InvalidOptionError);
      expect((error as Error).message).toBe(
        `The \`env\` option of run("sh") looks like a copy of the host env (it sets HOME to the host's "/host/home"); ${advice}`,
      );
      expect(() => spawnProcess('sh', [], { sandbox: sb, env: git.env() })).toThrow(
        'The `env` option of spawnProcess("sh") looks like a copy of the host env (it sets HOME',
      );

      // The way it points at: the mock on the sandbox PATH, the sandbox's own HOME, no secret.
      git.enqueue({ stdout: 'mocked\n' });
      sb.use(git);
      const r = await run('sh', ['-c', 'git; echo "$HOME|$SHIMKIT_TEST_SECRET"'], {
        sandbox: sb,
        env: { CI: '1' },
      });
      expect(r.stdout).toBe(`mocked\n${sb.home}|\n`);
    },
  );

  it.skipIf(process.platform === 'win32')(
    'SP-09 a host copy with HOME fixed up still throws: it carries most host vars',
    async () => {
      vi.stubEnv('SHIMKIT_TEST_SECRET', 'hunter2');
      await using sb = createSandbox({ tmpDir: testDir() });
      const copy = { ...process.env, HOME: sb.home, TMPDIR: sb.tmp };

      expect(() => spawnProcess('true', [], { sandbox: sb, env: copy })).toThrow(
        /^The `env` option of spawnProcess\("true"\) looks like a copy of the host env \(it carries the host's values for \d+ of the \d+ host vars outside the sandbox allowlist\); with `sandbox`/,
      );
      // Without a sandbox there is nothing to lose: the env is used as given.
      const r = await run('sh', ['-c', 'echo $SHIMKIT_TEST_SECRET'], { env: copy });
      expect(r.stdout).toBe('hunter2\n');
    },
  );

  it('SP-09 what counts as a host copy (POSIX and Windows spellings)', () => {
    const host = { PATH: '/usr/bin', HOME: '/root', LANG: 'C', AWS_SECRET: 's', USER: 'root' };
    const sandbox = { PATH: '/usr/bin', HOME: '/sb/home', LANG: 'C' };
    const reason = (env: Record<string, string | undefined>, platform: NodeJS.Platform = 'linux') =>
      hostCopyReason(env, sandbox, host, platform);

    expect(reason({ ...host, PATH: '/mock:/usr/bin' })).toBe('it sets HOME to the host\'s "/root"');
    expect(reason({ ...host, HOME: '/sb/home' })).toBe(
      "it carries the host's values for 2 of the 3 host vars outside the sandbox allowlist",
    );
    // A few vars a test sets, one host value passed on purpose, PATH and allowlisted vars: fine.
    expect(reason({ CI: '1', USER: 'root' })).toBeUndefined();
    expect(reason({ PATH: '/mock:/usr/bin', LANG: 'C' })).toBeUndefined();
    expect(reason({ HOME: '/sb/home' })).toBeUndefined(); // the sandbox's own value
    expect(
      hostCopyReason({ HOME: '/root' }, { HOME: '/root' }, host, 'linux'), // the sandbox was given it
    ).toBeUndefined();

    // Windows: keys match in any case.
    const winHost = { Path: 'C:\\bin', USERPROFILE: 'C:\\Users\\me', SystemRoot: 'C:\\Windows' };
    expect(
      hostCopyReason(
        { userprofile: 'C:\\Users\\me' },
        { Path: 'C:\\bin', USERPROFILE: 'C:\\sb\\home' },
        winHost,
        'win32',
      ),
    ).toBe('it sets USERPROFILE to the host\'s "C:\\\\Users\\\\me"');
  });
});

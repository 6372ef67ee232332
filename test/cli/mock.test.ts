import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { openMockBinDir } from 'shimkit';
import { describe, expect, it } from 'vitest';
import { runCommand, testDir } from '../helpers/index.js';
import { queueLines, shimkit, shimkitOk } from './helpers.js';

describe('shimkit mock, enqueue, calls, verify', () => {
  it('CLI-01 mock prints export PATH; enqueue, the real shim, calls and verify round-trip across processes', async () => {
    const d = join(testDir(), 'mocks');
    const out = await shimkitOk(['mock', 'git', '--dir', d]);
    expect(out).toBe(`export PATH=${d}/bin:"$PATH"\n`);
    await shimkitOk(['enqueue', d, 'git', '--stdout', 'main\n']);
    await shimkitOk([
      'enqueue',
      d,
      'git',
      '--stderr',
      'rejected\n',
      '--exit',
      '1',
      '--delay',
      '50ms',
    ]);
    // The script under test runs under the printed PATH, in a shell.
    const r = await runCommand('sh', [
      '-c',
      `${out} git rev-parse --abbrev-ref HEAD && git push origin 'a b'; echo "rc=$?"`,
    ]);
    expect(r.stdout.toString()).toBe('main\nrc=1\n');
    expect(r.stderr.toString()).toBe('rejected\n');
    expect(await shimkitOk(['calls', d])).toBe(
      "#1 git rev-parse --abbrev-ref HEAD -> exit 0 (response #1)\n#2 git push origin 'a b' -> exit 1 (response #2)\n",
    );
    const calls = JSON.parse(await shimkitOk(['calls', d, 'git', '--json']));
    expect(calls.map((c: { argv: string[] }) => c.argv)).toEqual([
      ['rev-parse', '--abbrev-ref', 'HEAD'],
      ['push', 'origin', 'a b'],
    ]);
    expect(calls[1]).toMatchObject({ mock: 'git', index: 2, exitCode: 1, response: 2 });
    expect(await shimkitOk(['verify', d])).toBe('ok: mock "git", 2 calls, every response used\n');
    // SEC-01 holds for what the command made and for what the calls wrote:
    // dirs 0700, files 0600, shims 0700.
    for (const path of walk(d)) {
      const mode = statSync(path).mode & 0o777;
      const expected =
        statSync(path).isDirectory() || path === join(d, 'bin', 'git') ? 0o700 : 0o600;
      expect(mode.toString(8), path).toBe(expected.toString(8));
    }
  });

  it('CLI-01 mock --json for other languages; a second mock joins the dir; names a program can run by PATH alone', async () => {
    const d = join(testDir(), 'mocks');
    const first = JSON.parse(await shimkitOk(['mock', 'git', 'docker', '--dir', d, '--json']));
    expect(first).toMatchObject({ dir: d, binDir: join(d, 'bin'), names: ['git', 'docker'] });
    expect(first.path.startsWith(`${join(d, 'bin')}:`)).toBe(true);
    await shimkitOk(['mock', 'kubectl', '--dir', d, '--on-exhausted', 'fail']);
    await shimkitOk(['enqueue', d, 'kubectl', '--stdout', 'pods\n']);
    const env = { PATH: join(d, 'bin') };
    expect((await runCommand(join(d, 'bin', 'kubectl'), ['get'], { env })).stdout.toString()).toBe(
      'pods\n',
    );
    const failed = await runCommand(join(d, 'bin', 'kubectl'), ['get'], { env });
    expect(failed.code).not.toBe(0); // --on-exhausted fail: no repeat
    expect(
      openMockBinDir(d)
        .mocks()
        .map((m) => m.name),
    ).toEqual(['docker', 'git', 'kubectl']);
  });

  it('CLI-01 odd bytes: newlines and quotes in --stdout, non-UTF-8 through --stdout-base64 and --json, argv bytes in calls --json', async () => {
    const d = join(testDir(), 'mocks');
    await shimkitOk(['mock', 'tool', '--dir', d]);
    const text = `line 1\n'quoted' "double" $HOME \`x\` \\ -n\n\n`;
    await shimkitOk(['enqueue', d, 'tool', '--stdout', text]);
    const bytes = Buffer.from([0xff, 0xfe, 0x00, 0x0a, 0x80]);
    await shimkitOk(['enqueue', d, 'tool', '--stdout-base64', bytes.toString('base64')]);
    await shimkitOk([
      'enqueue',
      d,
      'tool',
      '--json',
      JSON.stringify({ stderrBase64: Buffer.from([0xc3, 0x28]).toString('base64'), exitCode: 7 }),
    ]);
    await shimkitOk(['enqueue', d, 'tool', '--json', '-'], {
      input: JSON.stringify([{ stdout: 'from stdin\n' }, { jsonl: [{ a: 1 }, 'b'] }]),
    });
    const tool = join(d, 'bin', 'tool');
    expect((await runCommand(tool, [])).stdout.toString()).toBe(text);
    expect((await runCommand(tool, [])).stdout).toEqual(bytes);
    const third = await runCommand(tool, []);
    expect([third.code, third.stderr]).toEqual([7, Buffer.from([0xc3, 0x28])]);
    expect((await runCommand(tool, [])).stdout.toString()).toBe('from stdin\n');
    expect((await runCommand(tool, [])).stdout.toString()).toBe('{"a":1}\n"b"\n');
    // An argument that is not UTF-8 is recorded as bytes too.
    await runCommand('sh', ['-c', `"${tool}" "$(printf 'a\\377b')" ''`]);
    const calls = JSON.parse(await shimkitOk(['calls', d, '--json']));
    const last = calls.at(-1);
    expect(last.argvBase64.map((b: string) => Buffer.from(b, 'base64'))).toEqual([
      Buffer.from([0x61, 0xff, 0x62]),
      Buffer.alloc(0),
    ]);
    expect(calls.slice(0, -1).every((c: object) => !('argvBase64' in c))).toBe(true);
  });

  it('CLI-01 verify exits 1 with the unused-response report on stderr (and --json)', async () => {
    const d = join(testDir(), 'mocks');
    await shimkitOk(['mock', 'git', 'docker', '--dir', d]);
    await shimkitOk(['enqueue', d, 'git', '--stdout', 'main']);
    await shimkitOk(['enqueue', d, 'git', '--exit', '1']);
    await runCommand(join(d, 'bin', 'git'), ['status']);
    const r = await shimkit(['verify', d]);
    expect(r.code).toBe(1);
    expect(r.stdout.toString()).toBe('ok: mock "docker", 0 calls, every response used\n');
    expect(r.stderr.toString()).toContain(
      'mock "git": 1 of 2 responses used; never used: #2 {exitCode:1}',
    );
    expect(r.stderr.toString()).toContain('#1 git status');
    const json = await shimkit(['verify', d, 'git', '--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout.toString())).toMatchObject({
      ok: false,
      mocks: [{ name: 'git', ok: false, calls: 1 }],
    });
    // --optional and --times: verify asks only for what they say.
    await shimkitOk(['mock', 'make', '--dir', d]);
    await shimkitOk(['enqueue', d, 'make', '--optional', '--match-args', 'clean']);
    await shimkitOk(['enqueue', d, 'make', '--times', 'always', '--match-args', 'all']);
    expect((await shimkit(['verify', d, 'make'])).code).toBe(1); // `always` wants one call
    await runCommand(join(d, 'bin', 'make'), ['all']);
    expect((await shimkit(['verify', d, 'make'])).code).toBe(0);
  });

  it('CLI-01 routing flags: --match-args (words or JSON), --match-prefix, --times', async () => {
    const d = join(testDir(), 'mocks');
    await shimkitOk(['mock', 'git', '--dir', d]);
    await shimkitOk([
      'enqueue',
      d,
      'git',
      '--match-args',
      '["commit","-m","a b"]',
      '--stdout',
      'c',
    ]);
    await shimkitOk([
      'enqueue',
      d,
      'git',
      '--match-prefix',
      'push origin',
      '--stdout',
      'p',
      '--times',
      '2',
    ]);
    const git = join(d, 'bin', 'git');
    const out = async (args: string[]) => (await runCommand(git, args)).stdout.toString();
    expect(await out(['push', 'origin', 'x'])).toBe('p');
    expect(await out(['commit', '-m', 'a b'])).toBe('c');
    expect(await out(['push', 'origin', 'y'])).toBe('p');
    await shimkitOk(['verify', d]);
  });

  it('CLI-01 bad input gives exit 2 or 3 and says what to do next; did-you-mean on commands and flags', async () => {
    const d = join(testDir(), 'mocks');
    const err = async (args: string[], code: number) => {
      const r = await shimkit(args);
      expect(r.code, args.join(' ')).toBe(code);
      expect(r.stdout.toString()).toBe('');
      return r.stderr.toString();
    };
    expect(await err(['enqeue', d, 'git'], 2)).toContain('Did you mean `shimkit enqueue`?');
    expect(await err(['mock', 'git'], 2)).toContain('Pass --dir D');
    expect(await err(['mock', 'git', '--dri', d], 2)).toContain(
      'unknown flag "--dri". Did you mean --dir?',
    );
    expect(await err(['calls', d], 3)).toContain(
      `${d} is not a shimkit mock dir (it does not exist)`,
    );
    expect(await err(['verify', testDir()], 3)).toContain('has no shimkit.json');
    await shimkitOk(['mock', 'git', '--dir', d]);
    expect(await err(['mock', 'git', '--dir', d], 2)).toContain('already has a mock named "git"');
    expect(await err(['enqueue', d, 'gti', '--stdout', 'x'], 3)).toContain(
      'has no mock named "gti"; did you mean "git"? Mocks there: git.',
    );
    expect(await err(['enqueue', d, 'git', '--stdot', 'x'], 2)).toContain('Did you mean --stdout?');
    expect(await err(['enqueue', d, 'git', '--exit', '256'], 2)).toContain('from 0 to 255');
    expect(await err(['enqueue', d, 'git', '--delay', 'soon'], 2)).toContain('200, 200ms or 1.5s');
    expect(await err(['enqueue', d, 'git', '--json', '{stdout:1}'], 2)).toContain('not valid JSON');
    expect(await err(['enqueue', d, 'git', '--json', '{"ouptut":"x"}'], 2)).toContain(
      'Did you mean `stdout`?',
    );
    expect(await err(['enqueue', d, 'git', '--stdout'], 2)).toContain('--stdout needs a value');
    expect(await err(['enqueue', d, 'git', '--stdout-base64', 'not base64!'], 2)).toContain(
      'base64',
    );
    expect(
      await err(['enqueue', d, 'git', '--json', '{"stdout":"a"}', '--stdout', 'b'], 2),
    ).toContain('given both in --json and by a flag');
    expect(await err(['enqueue', d], 2)).toContain('missing NAME');
    // Nothing was queued by the refused commands.
    expect(queueLines(d, 'git')).toEqual([]);
  });

  it('CLI-01 --help on every command shows its options, examples and the exit codes', async () => {
    const top = await shimkitOk(['--help']);
    for (const command of ['mock', 'enqueue', 'calls', 'verify', 'proxy', 'clean', 'demo']) {
      expect(top).toContain(`  ${command} `);
      const help = await shimkitOk([command, '--help']);
      expect(help, command).toMatch(new RegExp(`^Usage: shimkit ${command}`));
      expect(help, command).toMatch(/Examples?:\n {2}(\S.*)?shimkit /);
      expect(help, command).toContain('Exit codes:\n  0   ok');
    }
    expect(top).toContain('2   usage error');
    expect(await shimkitOk(['help', 'enqueue'])).toContain('--match-args');
    expect((await shimkit([])).code).toBe(2);
  });
});

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? [path, ...walk(path)] : [path];
  });
}

// PERF-09: routed generations whose matches are literal, served by the sh shim
// itself. Checks that the shell and the runner agree byte for byte under dash,
// bash and busybox sh, that a routed storm stays exactly once, and that the
// shell hands over whatever it cannot decide exactly.
import { readFileSync, realpathSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { any, createMockBinary, MockExitCode, type MockResponse } from '../../src/index.js';
import { routeChunkPath } from '../../src/queue/layout.js';
import { SH_ROUTE_LIMIT } from '../../src/queue/sh-route.js';
import {
  checkRoutedShAgreesWithRunner,
  expectRoutedStormExactlyOnce,
  isShRecord,
  racingShim,
  SHELLS,
} from '../helpers/fast-path.js';
import { runCommand, testDir } from '../helpers/index.js';
import { generationDir } from '../helpers/protocol.js';

/** Which path served each call so far: 'sh' or 'runner'. */
const servedBy = (git: Parameters<typeof isShRecord>[0]) =>
  git.calls().map((c) => (isShRecord(git, c.index) ? 'sh' : 'runner'));

describe('PERF-09 the sh shim and the runner agree on routed generations', () => {
  for (const [i, shell] of SHELLS.entries()) {
    it.skipIf(!shell.path)(
      `PERF-09 MB-13 random literal, any(), RegExp, cwd and env routes with times: byte-identical output, exit codes, files and call records on both paths (${shell.name}, 4 scenarios)`,
      async () => {
        const shServed = await checkRoutedShAgreesWithRunner(shell.path as string, {
          numRuns: 4,
          seed: 2311 + i,
        });
        expect(shServed).toBeGreaterThan(0);
      },
    );
  }
});

describe('PERF-09 the shell serves literal routes', () => {
  it('PERF-09 MB-13 args, argsPrefix, any(), env literal and null, cwd literal, times and always: the answers the runner gives, every call from the shell', async () => {
    const dir = realpathSync(testDir());
    await using git = createMockBinary('git', {
      onExhausted: 'repeat',
      responses: [
        { match: { args: ['status', '--short'] }, stdout: 'short\n', times: 2 },
        { match: { argsPrefix: ['push', any()] }, stdout: 'pushed\n', exitCode: 1 },
        { match: { args: ['ci'], env: { CI: 'true' } }, stdout: 'on ci\n', times: 'always' },
        { match: { args: ['ci'], env: { CI: null } }, stdout: 'no ci\n' },
        { match: { args: ['here'], cwd: dir }, stdout: 'in dir\n' },
        { match: { args: ["it's $x *"] }, stdout: 'quoted\n' },
      ],
    });
    const env = git.env();
    const call = async (args: string[], extra: NodeJS.ProcessEnv = {}, cwd?: string) => {
      const e = { ...env, ...extra };
      if (extra.CI === undefined) delete e.CI;
      const r = await runCommand('git', args, { env: e, cwd });
      return `${r.code} ${r.stdout}${r.stderr}`;
    };
    expect(await call(['status', '--short'])).toBe('0 short\n');
    expect(await call(['status', '--short'])).toBe('0 short\n');
    expect(await call(['status', '--short'])).toBe('0 short\n'); // repeat: the last that fitted
    expect(await call(['push', 'origin', 'main'])).toBe('1 pushed\n');
    expect(await call(['ci'], { CI: 'true' })).toBe('0 on ci\n');
    expect(await call(['ci'], { CI: 'true' })).toBe('0 on ci\n');
    expect(await call(['ci'])).toBe('0 no ci\n');
    expect(await call(['here'], {}, dir)).toBe('0 in dir\n');
    expect(await call(["it's $x *"])).toBe('0 quoted\n');
    expect(git.calls().map((c) => [c.responseSource, c.response])).toEqual([
      ['queue', 1],
      ['queue', 1],
      ['repeat', 1],
      ['queue', 2],
      ['queue', 3],
      ['queue', 3],
      ['queue', 4],
      ['queue', 5],
      ['queue', 6],
    ]);
    expect(servedBy(git)).toEqual(Array(9).fill('sh'));
    git.assertDone();
  });

  it('PERF-09 a cwd reached through a symlink: a literal of the real path fits and one of the link does not, on both paths', async () => {
    const real = realpathSync(testDir());
    const link = join(testDir(), 'link');
    symlinkSync(real, link);
    for (const fastPath of [true, false]) {
      await using git = createMockBinary('git', {
        onExhausted: 'fail',
        fastPath,
        responses: [
          { match: { cwd: link }, stdout: 'link\n', times: 'always' },
          { match: { cwd: real }, stdout: 'real\n', times: 'always' },
        ],
      });
      // PWD names the link: the shell's idea of where it is, not getcwd's.
      const r = await runCommand('sh', ['-c', `cd '${link}' && exec "$0"`, git.path], {
        env: git.env(),
      });
      expect(`${r.code} ${r.stdout}`).toBe('0 real\n');
      expect(servedBy(git)).toEqual([fastPath ? 'sh' : 'runner']);
    }
  });

  it('PERF-09 a queue that becomes routed after plain responses: the route chunks are made from the whole queue, each response still once', async () => {
    await using git = createMockBinary('git', {
      onExhausted: 'fail',
      responses: Array.from({ length: 70 }, (_, i) => ({ stdout: `plain ${i + 1}\n` })),
    });
    expect(await runCommand(git.path, ['x']).then((r) => r.stdout.toString())).toBe('plain 1\n');
    git.enqueue({ match: { args: ['log'] }, stdout: 'log\n' });
    expect(await runCommand(git.path, ['log']).then((r) => r.stdout.toString())).toBe('plain 2\n');
    for (let i = 3; i <= 70; i++) await runCommand(git.path, ['y']);
    expect(await runCommand(git.path, ['log']).then((r) => r.stdout.toString())).toBe('log\n');
    const last = await runCommand(git.path, ['log']);
    expect(last.code).toBe(MockExitCode.unmatched);
    expect(git.calls().map((c) => c.response)).toEqual([
      ...Array.from({ length: 70 }, (_, i) => i + 1),
      71,
      undefined,
    ]);
    expect(servedBy(git).filter((p) => p === 'sh').length).toBe(71);
  });

  it('PERF-09 routes enqueued one at a time across chunk boundaries: each chunk holds its 64 lines in order, and the shell finds the last', async () => {
    await using git = createMockBinary('git', { onExhausted: 'fail' });
    for (let i = 1; i <= 130; i++) git.enqueue({ match: { args: [`a${i}`] }, stdout: `${i}\n` });
    const chunks = [1, 2, 3].map((c) =>
      readFileSync(routeChunkPath(generationDir(git), c), 'utf8')
        .trimEnd()
        .split('\n'),
    );
    expect(chunks.map((lines) => lines.length)).toEqual([65, 65, 3]); // and the closing ':'
    expect(chunks[2]?.[1]).toContain("'xa130'");
    for (const n of [130, 64, 65, 1]) {
      expect((await runCommand(git.path, [`a${n}`])).stdout.toString()).toBe(`${n}\n`);
    }
    expect(git.calls().map((c) => c.response)).toEqual([130, 64, 65, 1]);
    expect(servedBy(git)).toEqual(['sh', 'sh', 'sh', 'sh']);
  });
});

describe('PERF-09 the shell hands over what it cannot decide exactly', () => {
  const undecidable: Array<[string, MockResponse]> = [
    ['a RegExp', { match: { args: [/^x/] }, stdout: 'regex\n' }],
    ['a literal with U+FFFD', { match: { args: ['st\uFFFD'] }, stdout: 'fffd\n' }],
    ['a literal with a control byte', { match: { args: ['a\u0001'] }, stdout: 'ctl\n' }],
    ['an env var the shell sets itself', { match: { env: { PATH: '/nowhere' } }, stdout: 'p\n' }],
    ['a RegExp cwd', { match: { cwd: /nowhere$/ }, stdout: 'cwd\n' }],
  ];
  for (const [what, route] of undecidable) {
    it(`PERF-09 ${what} before the response that fits: the runner serves the call, and answers as it would without the shell`, async () => {
      await using git = createMockBinary('git', {
        onExhausted: 'fail',
        responses: [route, { match: { args: ['status'] }, stdout: 'status\n' }],
      });
      const r = await runCommand(git.path, ['status']);
      expect(`${r.code} ${r.stdout}`).toBe('0 status\n');
      expect(servedBy(git)).toEqual(['runner']);
    });
  }

  it('PERF-09 a RegExp route whose literal parts rule the call out costs the shell nothing: it serves the call', async () => {
    await using git = createMockBinary('git', {
      onExhausted: 'fail',
      responses: [
        { match: { args: ['tag', /^v\d/] }, stdout: 'tag\n' },
        { match: { args: ['status'] }, stdout: 'status\n' },
      ],
    });
    expect((await runCommand(git.path, ['status'])).stdout.toString()).toBe('status\n');
    expect((await runCommand(git.path, ['tag', 'v1'])).stdout.toString()).toBe('tag\n');
    expect(servedBy(git)).toEqual(['sh', 'runner']);
  });

  it(`PERF-09 more than ${SH_ROUTE_LIMIT} routed responses: the runner's`, async () => {
    await using git = createMockBinary('git', {
      onExhausted: 'fail',
      responses: Array.from({ length: SH_ROUTE_LIMIT + 1 }, (_, i) => ({
        match: { args: [`a${i + 1}`] },
        stdout: `${i + 1}\n`,
      })),
    });
    expect((await runCommand(git.path, ['a1'])).stdout.toString()).toBe('1\n');
    expect(servedBy(git)).toEqual(['runner']);
  });

  it('PERF-09 SEC-02 a route chunk gone: the runner serves the call', async () => {
    await using git = createMockBinary('git', {
      onExhausted: 'fail',
      responses: [{ match: { args: ['status'] }, stdout: 'status\n' }],
    });
    unlinkSync(routeChunkPath(generationDir(git), 1));
    expect((await runCommand(git.path, ['status'])).stdout.toString()).toBe('status\n');
    expect(servedBy(git)).toEqual(['runner']);
  });

  it('PERF-09 MB-13 a call nothing fits: the runner writes the diagnostic, byte for byte what a mock without the shell writes', async () => {
    const outcomes = [];
    for (const fastPath of [true, false]) {
      await using git = createMockBinary('git', {
        onExhausted: 'fail',
        fastPath,
        responses: [
          { match: { args: ['push', any()] }, stdout: 'push\n' },
          { match: { args: ['pull'] }, stdout: 'pull\n' },
        ],
      });
      const r = await runCommand(git.path, ['push']);
      outcomes.push({
        code: r.code,
        stderr: r.stderr.toString().replaceAll(git.stateDir, '<state>'),
        diagnostic: git.calls()[0]?.diagnostic?.replaceAll(git.stateDir, '<state>'),
      });
    }
    expect(outcomes[0]?.code).toBe(MockExitCode.unmatched);
    expect(outcomes[0]?.stderr).toContain('the closest is #1');
    expect(outcomes[0]).toEqual(outcomes[1]);
  });

  it('PERF-09 losing the race for a routed slot: the shell takes the next slot, then the next response that fits, and hands a runner-only one it claimed over (step c)', async () => {
    await using git = createMockBinary('git', {
      onExhausted: 'fail',
      responses: [
        { match: { args: ['racer'] }, stdout: 'a\n', times: 2 },
        { match: { args: ['racer'] }, stdout: 'b\n' },
        { match: { args: ['racer'] }, chunks: [{ stdout: 'c\n' }] },
      ],
    });
    const shim = racingShim(git);
    // Each racing call lets another call take what it had picked, then claims.
    const outs = [];
    for (let i = 0; i < 2; i++) {
      const r = await runCommand(shim, ['racer']);
      outs.push(`${r.code} ${r.stdout}`);
    }
    expect(outs).toEqual(['0 a\n', '0 c\n']);
    expect(git.calls().map((c) => c.response)).toEqual([1, 1, 2, 3]);
    // Every record is the shell's; #3's chunks came from the runner it handed the call to.
    expect(servedBy(git)).toEqual(['sh', 'sh', 'sh', 'sh']);
  });
});

describe('PERF-09 what the review found', () => {
  /** The same calls through a mock with the fast path and one without: output and claims. */
  async function bothPaths(
    responses: MockResponse[],
    calls: Array<{ args: string[]; env?: NodeJS.ProcessEnv; cwd?: string; shell?: string }>,
    then?: (git: Awaited<ReturnType<typeof createMockBinary>>) => void,
  ) {
    const outcomes = [];
    for (const fastPath of [true, false]) {
      await using git = createMockBinary('git', { onExhausted: 'fail', fastPath, responses });
      then?.(git);
      const outs = [];
      for (const c of calls) {
        const r = c.shell
          ? await runCommand(c.shell, [git.path, ...c.args], {
              env: c.env,
              cwd: c.cwd,
              argv0: 'sh',
            })
          : await runCommand(git.path, c.args, { env: c.env, cwd: c.cwd });
        outs.push(`${r.code} ${r.stdout}`);
      }
      outcomes.push({ outs, claims: git.calls().map((c) => [c.responseSource, c.response]) });
    }
    expect(outcomes[0]).toEqual(outcomes[1]);
    return outcomes[0];
  }

  it('PERF-09 a literal with a newline: the runner decides, and a later append keeps every route line whole', async () => {
    const got = await bothPaths(
      [
        { match: { args: ['a\nb'] }, stdout: 'one\n' },
        { match: { args: ['z'] }, stdout: 'two\n' },
      ],
      [{ args: ['z'] }, { args: ['z'] }, { args: ['a\nb'] }],
      (git) => git.enqueue({ stdout: 'three\n' }),
    );
    expect(got?.outs).toEqual(['0 two\n', '0 three\n', '0 one\n']);
  });

  it('PERF-09 env names Object.prototype has (constructor, toString): an unset one is unset on both paths', async () => {
    const got = await bothPaths(
      [
        { match: { env: { toString: any() } }, stdout: 'inherited\n' },
        { match: { env: { constructor: null } }, stdout: 'unset\n' },
      ],
      [{ args: [] }],
    );
    expect(got?.outs).toEqual(['0 unset\n']);
  });

  const bash = SHELLS.find((s) => s.name === 'bash')?.path;
  it.skipIf(!bash)(
    'PERF-09 bash as sh: BASHPID, BASH_ARGV0 and COMP_WORDBREAKS are its own, and a cwd of // is / (as getcwd says)',
    async () => {
      const env = { ...process.env, PWD: '//' };
      const got = await bothPaths(
        [
          { match: { env: { BASHPID: null } }, stdout: 'no bashpid\n' },
          { match: { env: { COMP_WORDBREAKS: null, BASH_ARGV0: null } }, stdout: 'no comp\n' },
          { match: { cwd: '/' }, stdout: 'root\n', times: 'always' },
          { stdout: 'plain\n' }, // what a shell that compared "//" would serve
        ],
        [0, 1, 2].map(() => ({ args: [], env, cwd: '/', shell: bash })),
      );
      expect(got?.outs).toEqual(['0 no bashpid\n', '0 no comp\n', '0 root\n']);
    },
  );

  it('PERF-09 SHIMKIT_PASSED_THROUGH, which the runner takes out of its env, is not matched by the shell either', async () => {
    const env = { ...process.env, SHIMKIT_PASSED_THROUGH: 'x' };
    const got = await bothPaths(
      [
        { match: { env: { SHIMKIT_PASSED_THROUGH: null } }, stdout: 'unset\n' },
        { stdout: 'plain\n' },
      ],
      [{ args: [], env }],
    );
    expect(got?.outs).toEqual(['0 unset\n']);
  });
});

describe('PERF-09 MB-02 MB-08 routed storms stay exactly once', () => {
  for (const shell of SHELLS) {
    it.skipIf(!shell.path)(
      `PERF-09 MB-02 MB-08 24 parallel routed calls with times, static and runner-only responses, random SIGKILLs: no response past its times, survivors print what they claimed (${shell.name})`,
      () => expectRoutedStormExactlyOnce(shell.path as string, 24, Date.now()),
    );
  }
});

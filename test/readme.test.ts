// The README's examples, run as tests. Keep the two in step: each block here is
// copied into README.md under the same heading.
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  any,
  createMockBinary,
  createMockBinDir,
  createSandbox,
  MockExitCode,
  run,
  UnusedResponsesError,
} from '../src/index.js';
import { runCommand, spawnTracked, testDir } from './helpers/index.js';

const execFileAsync = promisify(execFile);

describe('README examples', () => {
  it('MB-06 README: quick start', async () => {
    // README: quick start
    await using git = createMockBinary('git', {
      responses: [{ stdout: 'main\n' }, {}], // answers to the first and second call
    });

    // The program under test runs with the mock first on its PATH.
    execFileSync('sh', ['-c', 'git tag "v1-$(git branch --show-current)"'], { env: git.env() });

    expect(git.calls().map((c) => c.argv)).toEqual([
      ['branch', '--show-current'],
      ['tag', 'v1-main'],
    ]);
    git.assertDone(); // every scripted response was used
  });

  it('MB-01 README: mock git for one test', async () => {
    // README: mock git for one test
    await using git = createMockBinary('git');
    git.enqueue({ stdout: 'main\n' });

    const out = execFileSync('git', ['branch', '--show-current'], { env: git.env() });

    expect(String(out)).toBe('main\n');
    expect(git.lastCall()?.argv).toEqual(['branch', '--show-current']);
    git.assertDone();
  });

  it('MB-05 README: script a sequence of answers', async () => {
    // README: script a sequence of answers
    await using gh = createMockBinary('gh', { onExhausted: 'fail' });
    gh.enqueue([
      { stdout: '{"state":"OPEN"}\n' },
      { stderr: 'HTTP 502\n', exitCode: 1, delayMs: 50 },
      { jsonl: [{ id: 1 }, { id: 2 }] },
    ]);
    const env = gh.env();

    expect((await execFileAsync('gh', ['pr', 'view'], { env })).stdout).toBe('{"state":"OPEN"}\n');
    await expect(execFileAsync('gh', ['pr', 'merge'], { env })).rejects.toMatchObject({
      code: 1,
      stderr: 'HTTP 502\n',
    });
    expect((await execFileAsync('gh', ['api', 'issues'], { env })).stdout).toBe(
      '{"id":1}\n{"id":2}\n',
    );
    // A fourth call has no response: it fails loudly instead of passing by accident.
    await expect(execFileAsync('gh', ['pr', 'close'], { env })).rejects.toMatchObject({
      code: MockExitCode.unmatched,
    });
  });

  it('MB-07 README: parallel calls, each response exactly once', async () => {
    // README: parallel calls, each response exactly once
    await using docker = createMockBinary('docker');
    docker.enqueue(Array.from({ length: 64 }, (_, i) => ({ stdout: `container-${i + 1}\n` })));

    const outputs = await Promise.all(
      Array.from({ length: 64 }, () =>
        execFileAsync('docker', ['run', '-d', 'nginx'], { env: docker.env() }),
      ),
    );

    expect(new Set(outputs.map((o) => o.stdout)).size).toBe(64); // no response served twice
    expect(docker.callCount()).toBe(64); // none lost
    docker.assertDone();
  });

  it('PERF-07 README: a hundred calls, served without Node', async () => {
    // README: a hundred calls, served without Node
    await using git = createMockBinary('git', { onExhausted: { stdout: 'abc123\n' } });
    for (let i = 0; i < 100; i++) {
      execFileSync('git', ['rev-parse', 'HEAD'], { env: git.env() }); // ~3 ms each: no Node starts
    }
    expect(git.callCount()).toBe(100);
    expect(git.lastCall()?.responseSource).toBe('fallback');
    expect(git.lastCall()?.claimMs).toBeUndefined(); // the shell served it: it has no clock
  });

  it('MB-09 README: several mocks, one PATH entry, for the program under test', async () => {
    // README: several mocks, one PATH entry, for the program under test
    await using bin = createMockBinDir();
    const git = bin.mock('git', { responses: [{ stdout: 'release/2.4\n' }, { stdout: '' }] });
    const deploy = bin.mock('deploy', { default: { stdout: 'ok\n' } });

    const cli = fileURLToPath(
      new URL('../examples/orchestrator/orchestrator.mjs', import.meta.url),
    );
    const result = await execFileAsync(process.execPath, [cli], { env: bin.env() });

    expect(result.stdout).toBe('eu-west: ok\nus-east: ok\nap-south: ok\n');
    expect(git.calls().map((c) => c.argv)).toEqual([
      ['rev-parse', '--abbrev-ref', 'HEAD'],
      ['status', '--porcelain'],
    ]);
    expect(
      deploy
        .calls()
        .map((c) => c.argv[1])
        .sort(),
    ).toEqual(['ap-south', 'eu-west', 'us-east']);
  });

  it('MB-12 README: a failing test explains itself', async () => {
    // README: a failing test explains itself
    await using git = createMockBinary('git', {
      responses: [{ stdout: 'ok\n' }, { stdout: 'main' }, { exitCode: 1 }],
    });
    await execFileAsync('git', ['status'], { env: git.env() });

    expect(() => git.assertDone()).toThrow(UnusedResponsesError);
    expect(() => git.assertDone()).toThrow(
      'mock "git": 1 of 3 responses used; never used: #2 {stdout:"main"}, #3 {exitCode:1}\n' +
        'calls (1):\n' +
        '  #1 git status → response #1, exit 0',
    );
  });

  it('MB-06 README: record env and stdin', async () => {
    // README: record env and stdin
    await using kubectl = createMockBinary('kubectl', {
      recordEnv: ['KUBECONFIG'],
      stdin: 'capture',
    });

    await runCommand('kubectl', ['apply', '-f', '-'], {
      env: kubectl.env({ ...process.env, KUBECONFIG: '/tmp/kube.yaml' }),
      input: 'kind: Pod\n',
    });

    expect(kubectl.lastCall()).toMatchObject({
      argv: ['apply', '-f', '-'],
      env: { KUBECONFIG: '/tmp/kube.yaml' },
      stdin: 'kind: Pod\n',
    });
  });

  it('MB-03 README: write files and wait for a call', async () => {
    const cwd = testDir(); // README: mkdtempSync(join(tmpdir(), 'work-'))
    // README: write files and wait for a call
    await using pi = createMockBinary('pi');
    pi.enqueue({ writeFiles: { 'out/plan.md': '# Plan\n' }, stdout: 'done\n', delayMs: 100 });

    spawnTracked('pi', ['--mode', 'json'], { env: pi.env(), cwd }); // runs in the background
    const [call] = await pi.waitForCalls(1, { timeoutMs: 10_000 });

    expect(call?.exitCode).toBe(0);
    expect(readFileSync(join(cwd, 'out/plan.md'), 'utf8')).toBe('# Plan\n');
  });

  it('MB-13 README: route calls by their arguments', async () => {
    // README: route calls by their arguments
    await using git = createMockBinary('git', {
      onExhausted: 'fail',
      responses: [
        { match: { args: ['-C', 'r5', 'push'] }, stderr: 'rejected\n', exitCode: 1 },
        { match: { argsPrefix: ['-C', any()] }, stdout: 'ok\n', times: 'always' },
        { match: { args: ['tag', /^v\d+\.\d+\.\d+$/] }, times: 2 },
      ],
    });
    const env = git.env();

    // Five repos pushed in parallel: only r5's push fails.
    const pushes = await Promise.allSettled(
      ['r1', 'r2', 'r3', 'r4', 'r5'].map((r) => execFileAsync('git', ['-C', r, 'push'], { env })),
    );
    expect(pushes.map((p) => p.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'rejected',
    ]);

    // A call nothing fits fails, naming the closest response and why:
    await expect(execFileAsync('git', ['tag', 'v1.2'], { env })).rejects.toMatchObject({
      code: MockExitCode.unmatched,
      stderr: expect.stringContaining(
        'the closest is #3 (args ["tag", /^v\\d+\\.\\d+\\.\\d+$/]): arg 2: expected /^v\\d+\\.\\d+\\.\\d+$/, got "v1.2"',
      ),
    });
    git.assertNthCall(6, ['tag', any()]);
  });

  it('MB-22 README: strict mocks', async () => {
    // README: strict mocks
    const docker = createMockBinary('docker', {
      strict: true, // unexpected calls fail, nothing repeats, dispose() asserts done
      responses: [
        { match: { args: ['build', '-t', any(), '.'] } },
        { match: { argsPrefix: ['push'] }, times: 2 },
        { match: { args: ['logout'] }, optional: true },
      ],
    });
    const env = docker.env();
    await execFileAsync('docker', ['build', '-t', 'app:1', '.'], { env });
    await execFileAsync('docker', ['push', 'app:1'], { env });

    await expect(docker.dispose()).rejects.toThrow(
      'mock "docker": 2 of 3 responses used; used too few times: #2 {match:{argsPrefix ["push"]},times:2} (1 of 2 times)',
    );
  });

  it('MB-14 README: stream progress, then crash', async () => {
    // README: stream progress, then crash
    await using git = createMockBinary('git', {
      responses: [
        {
          stdout: 'Cloning into "app"...\n',
          chunks: [
            { stderr: 'Receiving objects: 50%\n', delayMs: 100 },
            { stderr: 'Receiving objects: 100%\n', delayMs: 100 },
          ],
          signal: 'SIGSEGV', // then it dies as a crashed git would
        },
      ],
    });
    const r = await runCommand('git', ['clone', 'url', 'app'], { env: git.env() });
    expect(r).toMatchObject({ code: null, signal: 'SIGSEGV' });
    expect(r.stderr.toString()).toBe('Receiving objects: 50%\nReceiving objects: 100%\n');
  });

  it('MB-15 README: spy on the real git', async () => {
    // README: spy on the real git
    await using git = createMockBinary('git', {
      spy: true, // every call runs the real git, and is recorded
      responses: [{ match: { argsPrefix: ['push'] }, stderr: 'rejected\n', exitCode: 1 }],
    });
    const version = await execFileAsync('git', ['--version'], { env: git.env() });
    expect(version.stdout).toMatch(/^git version /);
    await expect(execFileAsync('git', ['push'], { env: git.env() })).rejects.toMatchObject({
      code: 1,
    });
    expect(git.calls().map((c) => c.responseSource)).toEqual(['passthrough', 'queue']);
  });

  it('MB-24 README: record once, replay in CI', async () => {
    const cassette = join(testDir(), 'gh.cassette.json'); // README: join(__dirname, 'git.cassette.json')
    for (let run = 0; run < 2; run++) {
      // README: record once, replay in CI
      await using git = createMockBinary('git', { cassette }); // auto: replay if the file exists
      const out = await execFileAsync('git', ['--version'], { env: git.env() });
      expect(out.stdout).toMatch(/^git version /);
    }
  });

  it('MB-23 README: only mocked commands may run', async () => {
    // README: only mocked commands may run
    await using sb = createSandbox({ commands: 'mocked-only', allow: ['sh'] });
    await using git = createMockBinary('git', { responses: [{ stdout: 'ok\n' }] });
    sb.use(git);
    const r = await run('sh', ['-c', 'git pull && curl -fsS https://example.invalid'], {
      sandbox: sb,
    });
    expect(r.exitCode).toBe(127);
    expect(r.stderr).toContain('shimkit: curl is not mocked and not allowed in this sandbox');
    expect(sb.refusedCommands()).toEqual(['curl']);
  });

  it('MB-25 README: git is not installed', async () => {
    // README: git is not installed
    await using git = createMockBinary('git');
    git.makeUnavailable('ENOENT'); // or 'EACCES': there but not executable
    await expect(
      execFileAsync('git', ['status'], { env: git.env({ PATH: '' }) }),
    ).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });

  it('MB-16 README: answer from the test, and hold calls for a race', async () => {
    // README: answer from the test, and hold calls for a race
    await using git = createMockBinary('git', {
      responses: [{ match: { argsPrefix: ['push'] }, stdout: 'pushed\n', times: 'always' }],
    });
    git.handle((call) => (call.argv[0] === 'rev-parse' ? { stdout: 'abc123\n' } : undefined));
    const env = git.env();
    expect((await run('git', ['rev-parse', 'HEAD'], { env })).stdout).toBe('abc123\n');

    // Two pushes in parallel; the second finishes first.
    const a = git.hold({ args: ['push', 'a'] });
    const b = git.hold({ args: ['push', 'b'] });
    const pushes = [run('git', ['push', 'a'], { env }), run('git', ['push', 'b'], { env })];
    await a.waitReceived();
    await b.waitReceived();
    b.release(); // its queued response
    expect((await pushes[1])?.stdout).toBe('pushed\n');
    a.release({ stderr: 'rejected\n', exitCode: 1 }); // or a response of the test's own
    expect((await pushes[0])?.exitCode).toBe(1);
  });
});

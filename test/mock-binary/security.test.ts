import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import {
  createMockBinary,
  createMockBinDir,
  MockExitCode,
  ProtocolError,
  ShimkitError,
} from '../../src/index.js';
import { runCommand, testDir } from '../helpers/index.js';
import { generationDir } from '../helpers/protocol.js';

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? [path, ...walk(path)] : [path];
  });
}

describe('file modes and where files go', () => {
  it('SEC-01 state dirs are 0700, state files 0600, shims 0700', async () => {
    await using git = createMockBinary('git', { responses: [{ stdout: 'a' }], stdin: 'capture' });
    await runCommand(git.path, ['x']);
    git.reset();
    git.enqueue({ stdout: 'b' });
    await runCommand(git.path, ['y']);
    const root = dirname(git.dir);
    expect(statSync(root).mode & 0o777).toBe(0o700);
    // reset() deletes the old generation in the background: wait for that
    // to finish, or the walk races the delete.
    await vi.waitFor(() => expect(walk(root).filter((p) => p.includes('.retired-'))).toEqual([]), {
      timeout: 5000,
    });
    const entries = walk(root);
    expect(entries.length).toBeGreaterThan(8);
    for (const path of entries) {
      const mode = statSync(path).mode & 0o777;
      const expected = statSync(path).isDirectory() || path === git.path ? 0o700 : 0o600;
      expect(mode.toString(8), path).toBe(expected.toString(8));
    }
  });

  it('SEC-01 under umask 000 in the calling shell, every file a call writes is 0600 (shims 0700) and every dir 0700', async () => {
    await using bin = createMockBinDir();
    const git = bin.mock('git', {
      responses: [{ stdout: 'fast\n' }, { chunks: [{ stdout: 'runner\n', delayMs: 1 }] }],
      stdin: 'capture',
      recordEnv: true,
    });
    git.handle(() => ({ stdout: 'live\n' })); // the third call asks the test process: live/<n>.call
    const echo = bin.mock('echo', { spy: true }); // runs the real echo: a passthrough call
    const script = `umask 000; git one </dev/null; echo in | git two; git three </dev/null; "${echo.path}" spied`;
    const r = await runCommand('sh', ['-c', script], {
      env: { ...bin.env(), API_TOKEN: 's3cret' },
    });
    expect(r.stderr.toString()).toBe('');
    expect(r.stdout.toString()).toBe('fast\nrunner\nlive\nspied\n');
    expect(git.calls().map((c) => c.responseSource)).toEqual(['queue', 'queue', 'handler']);
    const entries = walk(bin.root);
    expect(entries.some((p) => p.endsWith('.call'))).toBe(true);
    for (const path of entries) {
      const mode = statSync(path).mode & 0o777;
      const shim = path === git.path || path === echo.path;
      const expected = statSync(path).isDirectory() || shim ? 0o700 : 0o600;
      expect(mode.toString(8), path).toBe(expected.toString(8));
    }
  });

  it('SEC-01 nothing is written outside the toolkit temp dir except writeFiles targets', async () => {
    const parent = testDir();
    const cwd = testDir();
    const home = testDir();
    {
      await using bin = createMockBinDir({ tmpDir: parent });
      const tool = bin.mock('tool', {
        responses: [{ stdout: 'a' }, { writeFiles: { 'made.txt': 'm' } }],
      });
      const env = { ...bin.env(), HOME: home, TMPDIR: home };
      await runCommand('tool', [], { cwd, env });
      await runCommand('tool', [], { cwd, env });
      tool.assertDone();
      expect(readdirSync(parent)).toEqual([bin.root.slice(parent.length + 1)]);
      expect(readdirSync(cwd)).toEqual(['made.txt']);
      expect(readdirSync(home)).toEqual([]);
    }
    expect(readdirSync(parent)).toEqual([]); // disposed
  });
});

describe('a broken state dir is a diagnostic, never a default response', () => {
  const reason = (stderr: Buffer) => {
    const text = stderr.toString();
    expect(text.endsWith('\n')).toBe(true);
    expect(text.trimEnd().split('\n')).toHaveLength(1); // one line
    return text.trimEnd();
  };

  it('SEC-02 a malformed queue line exits with the broken code and names the queue file', async () => {
    await using git = createMockBinary('git');
    const queue = join(generationDir(git), 'queue.jsonl');
    writeFileSync(queue, '{"stdout":"fine"}\n{"stdout": oops}\n');
    const first = await runCommand(git.path);
    expect(first.stdout.toString()).toBe('fine');
    const r = await runCommand(git.path, ['second']);
    expect(r.code).toBe(MockExitCode.broken);
    expect(r.stdout.toString()).toBe('');
    expect(reason(r.stderr)).toBe(`shimkit: queue line 2 is not valid JSON: ${queue}`);
    expect(git.lastCall()).toMatchObject({
      status: 'failed',
      exitCode: MockExitCode.broken,
      response: 2,
    });
  });

  it('SEC-02 a queue line with a wrong field is rejected by the runner too', async () => {
    await using git = createMockBinary('git');
    const queue = join(generationDir(git), 'queue.jsonl');
    writeFileSync(queue, '{"exitCode":"zero"}\n');
    const r = await runCommand(git.path);
    expect(r.code).toBe(MockExitCode.broken);
    expect(reason(r.stderr)).toBe(
      `shimkit: Expected the \`exitCode\` field of queue line 1 to be an integer from 0 to 255, got "zero" (string): ${queue}`,
    );
  });

  it('SEC-02 a missing state dir exits with the broken code and names the file', async () => {
    const git = createMockBinary('git');
    const shim = readFileSync(git.path, 'utf8');
    const copy = join(testDir(), 'git');
    writeFileSync(copy, shim, { mode: 0o700 });
    await git.dispose(); // the state dir is gone; the copied shim still points at it
    const r = await runCommand(copy);
    expect(r.code).toBe(MockExitCode.broken);
    expect(reason(r.stderr)).toBe(
      `shimkit: a state file is missing (was the mock disposed or reset while this call ran?): ${join(git.stateDir, 'state.json')}`,
    );
  });

  it('SEC-02 an unreadable or malformed state file exits with the broken code and names it', async () => {
    // state.json is the runner's: the sh shim reads only state.sh and sh/<n> (tested below).
    await using git = createMockBinary('git', { fastPath: false });
    const state = join(git.stateDir, 'state.json');
    const saved = readFileSync(state, 'utf8');
    const cases: Array<[string, string]> = [
      ['{not json', 'the mock state is not valid JSON'],
      [
        '{"generation":"../etc","config":{}}',
        'the mock state names generation "../etc", not "g<n>"',
      ],
      ['{"generation":"g1"}', 'the mock state has no config'],
    ];
    for (const [content, message] of cases) {
      writeFileSync(state, content);
      const r = await runCommand(git.path);
      expect(r.code, content).toBe(MockExitCode.broken);
      expect(reason(r.stderr)).toBe(`shimkit: ${message}: ${state}`);
    }
    rmSync(state);
    mkdirSync(state); // reading a directory fails the way an unreadable file does
    const r = await runCommand(git.path);
    expect(r.code).toBe(MockExitCode.broken);
    expect(reason(r.stderr)).toBe(`shimkit: a state file cannot be read (EISDIR): ${state}`);
    rmSync(state, { recursive: true });
    writeFileSync(state, saved);
    expect((await runCommand(git.path)).code).toBe(0);
  });

  it('SEC-02 a missing queue file in the live generation is a diagnostic, not an empty queue', async () => {
    await using git = createMockBinary('git', { responses: [{ stdout: 'x' }] });
    const queue = join(generationDir(git), 'queue.jsonl');
    rmSync(queue);
    const r = await runCommand(git.path);
    expect(r.code).toBe(MockExitCode.broken);
    expect(reason(r.stderr)).toBe(
      `shimkit: a state file is missing (was the mock disposed or reset while this call ran?): ${queue}`,
    );
  });

  it('SEC-02 the test process gets a ProtocolError naming the file, not a silent empty answer', async () => {
    await using git = createMockBinary('git', { responses: [{ stdout: 'x' }] });
    const state = join(git.stateDir, 'state.json');
    rmSync(state);
    for (const read of [() => git.calls(), () => git.callCount(), () => git.assertDone()]) {
      expect(read).toThrow(ProtocolError);
      expect(read).toThrow(
        `a state file is missing (was the mock disposed or reset while this call ran?): ${state}`,
      );
    }
    let error: unknown;
    try {
      git.enqueue({ stdout: 'y' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ShimkitError);
    expect(error).toMatchObject({ code: 'ERR_SHIMKIT_PROTOCOL', file: state });
  });
});

// A caller's low open-file limit (MB-20): Node raises its soft limit to the
// hard one, but needs about 20 open files to start and dies at once below
// that, saying nothing. A hard limit that low fails a runner call in the
// shim, with a one-line diagnostic and a record, never a silent crash.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { createMockBinary, MockExitCode } from '../../src/index.js';

/**
 * Call `shim a b` from bash after `ulimit <limit>`, with only stdio open
 * (fds the test runner's own parent leaked would count as the caller's).
 */
const ONLY_STDIO =
  // biome-ignore lint/suspicious/noTemplateCurlyInString: sh parameter expansion, not a template
  'for f in /proc/$$/fd/*; do n=${f##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-"; done';
function callUnder(limit: string, shim: string) {
  const script = `${ONLY_STDIO}; ulimit ${limit} || exit 99; "$0" a b`;
  const r = spawnSync('bash', ['-c', script, shim], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const WHY =
  "the hard open-file limit (ulimit -Hn) is 16, but Node needs 24 open files to run the mock's runner: raise it before the call (ulimit -n 64), or script a static response, which the shell serves";

describe('a low open-file limit', () => {
  for (const fastPath of [true, false]) {
    const path = fastPath ? 'sh fast path on' : 'runner only';
    it(`MB-20 a soft limit of 16 under a higher hard one does not stop the runner: the call is served as scripted (${path})`, async () => {
      await using git = createMockBinary('git', {
        fastPath,
        responses: [{ stdout: 'one\n', chunks: [{ stdout: 'two\n' }] }],
      });
      expect(callUnder('-S -n 16', git.path)).toEqual({
        code: 0,
        stdout: 'one\ntwo\n',
        stderr: '',
      });
      expect(git.calls().map((c) => [c.status, c.exitCode])).toEqual([['exited', 0]]);
    });

    it(`MB-20 a hard limit of 16 fails a runner call with a one-line diagnostic and a record (${path})`, async () => {
      await using git = createMockBinary('git', {
        fastPath,
        responses: [{ stdout: 'one\n', chunks: [{ stdout: 'two\n' }] }],
      });
      expect(callUnder('-n 16', git.path)).toEqual({
        code: MockExitCode.broken,
        stdout: '',
        stderr: `shimkit: mock "git": ${WHY}\n`,
      });
      expect(git.calls()).toMatchObject([
        {
          argv: ['a', 'b'],
          status: 'failed',
          exitCode: MockExitCode.broken,
          diagnostic: `mock "git": ${WHY}`,
          responseSource: 'none',
        },
      ]);
    });
  }

  it('MB-20 the files the caller left open count: 20 of them under a hard limit of 32 fail a runner call with the diagnostic; under 64 it is served', async () => {
    await using git = createMockBinary('git', {
      responses: [{ stdout: 'one\n', chunks: [{ stdout: 'two\n' }] }],
    });
    const open20 = 'for i in $(seq 3 22); do eval "exec $i</dev/null"; done';
    const r = callUnder(`-n 32 && ${open20}`, git.path);
    expect(r.code).toBe(MockExitCode.broken);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      /^shimkit: mock "git": the hard open-file limit \(ulimit -Hn\) is 32 and the caller left 23 files open, but Node needs 21 more to run the mock's runner: close them or raise the limit before the call \(ulimit -n 64\), or script a static response, which the shell serves\n$/,
    );
    expect(git.calls()).toMatchObject([{ status: 'failed', exitCode: MockExitCode.broken }]);
    git.reset();
    git.enqueue({ stdout: 'one\n', chunks: [{ stdout: 'two\n' }] });
    expect(callUnder(`-n 64 && ${open20}`, git.path)).toEqual({
      code: 0,
      stdout: 'one\ntwo\n',
      stderr: '',
    });
  });

  it('MB-20 a hard limit of 16 still lets the shell serve a static response', async () => {
    await using git = createMockBinary('git', {
      fastPath: true,
      responses: [{ stdout: 'static\n' }],
    });
    expect(callUnder('-n 16', git.path)).toEqual({ code: 0, stdout: 'static\n', stderr: '' });
    expect(git.calls().map((c) => [c.status, c.exitCode])).toEqual([['exited', 0]]);
  });
});

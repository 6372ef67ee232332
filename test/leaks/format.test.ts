import { describe, expect, it } from 'vitest';
import { formatLeakedProcess, mockOfRunner } from '../../src/leaks/format.js';

describe('leak sanitizer: one line per leaked process', () => {
  it('LK-01 a line names the process, then each parent nearest first, then its cwd', () => {
    const line = formatLeakedProcess(
      {
        pid: 4242,
        start: 1,
        argv: ['sleep', '600'],
        cwd: '/tmp/w',
        parents: [
          { pid: 4240, argv: ['sh', '-c', 'sleep 600 & wait'] },
          {
            pid: 4230,
            argv: [
              '/usr/bin/node',
              '--jitless',
              '/x/dist/runner.cjs',
              '/tmp/s/state/git.8b6adcd7',
              'push',
            ],
          },
          { pid: 100, argv: ['node', 'vitest'] },
        ],
      },
      100,
    );
    expect(line).toBe(
      'sleep 600 (pid 4242) ← sh -c "sleep 600 & wait" (pid 4240) ← mock `git` passthrough (pid 4230) ← this test process (pid 100)  [cwd /tmp/w]',
    );
  });

  it('LK-01 an orphan ends its chain at init; unreadable argv and cwd are shown as unknown', () => {
    const line = formatLeakedProcess(
      { pid: 7, start: 1, argv: [], cwd: undefined, parents: [{ pid: 1, argv: ['/sbin/init'] }] },
      100,
    );
    expect(line).toBe('? (pid 7) ← init (pid 1): its parent is gone');
  });

  it("LK-01 a mock's runner is told by its argv, also when resumed or for a dotted name", () => {
    expect(mockOfRunner(['node', '/d/runner.js', '/t/state/python3.11.ab12', '-V'])).toBe(
      'python3.11',
    );
    expect(mockOfRunner(['node', '/d/runner.cjs', 'resumed', '/t/state/git.ff00', 'log'])).toBe(
      'git',
    );
    expect(mockOfRunner(['node', 'server.js', '/t/state/git.ff00'])).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { createMockBinary, UnusedResponsesError } from '../../src/index.js';
import { runCommand } from '../helpers/index.js';

describe('diagnostics that explain a failing test', () => {
  it('MB-12 assertDone() lists the unused responses and the recorded calls', async () => {
    await using git = createMockBinary('git', {
      responses: [{ stdout: 'ok\n' }, { stdout: 'main' }, { exitCode: 1 }],
    });
    await runCommand(git.path, ['status']);
    let error: unknown;
    try {
      git.assertDone();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UnusedResponsesError);
    expect((error as UnusedResponsesError).code).toBe('ERR_SHIMKIT_UNUSED_RESPONSES');
    expect((error as Error).message).toBe(
      [
        'mock "git": 1 of 3 responses used; never used: #2 {stdout:"main"}, #3 {exitCode:1}',
        'calls (1):',
        '  #1 git status → response #1, exit 0',
      ].join('\n'),
    );
  });

  it('MB-12 a mock with no calls says so, and long values are shortened', async () => {
    await using git = createMockBinary('git', {
      responses: [{ stdout: 'x'.repeat(100), jsonl: [1, 2, 3], writeFiles: { 'a.txt': 'A' } }],
    });
    expect(() => git.assertDone()).toThrow(
      'mock "git": 0 of 1 responses used; never used: #1 {stdout:"xxxxxxxxxxxxxxxxxxxxxxxxxxxxx…",jsonl:[3 values],writeFiles:{"a.txt"}}\nno calls were recorded',
    );
  });

  it('MB-12 assertDone() passes when every response was used, including via repeats', async () => {
    await using git = createMockBinary('git', { responses: [{ stdout: 'a' }] });
    await runCommand(git.path);
    await runCommand(git.path);
    expect(() => git.assertDone()).not.toThrow();
  });

  it('MB-12 the report shows repeats, defaults, timeouts and unmatched calls', async () => {
    await using git = createMockBinary('git', { onExhausted: 'fail', timeoutMs: 200 });
    await runCommand(git.path, ['push', 'origin main']);
    git.enqueue([{ delayMs: 10_000 }, { stdout: 'never used' }]);
    await runCommand(git.path, ['fetch']);
    expect(() => git.assertDone()).toThrow(
      [
        'mock "git": 1 of 2 responses used; never used: #2 {stdout:"never used"}; 1 call had no response (#1)',
        'calls (2):',
        '  #1 git push "origin main" → no response, unmatched',
        '  #2 git fetch → response #1, timed out',
      ].join('\n'),
    );
  });

  it('MB-12 waitForCalls() times out with a message that lists the calls so far', async () => {
    await using git = createMockBinary('git');
    await runCommand(git.path, ['log']);
    await expect(git.waitForCalls(2, { timeoutMs: 100 })).rejects.toThrow(
      'mock "git": waited 100 ms for 2 calls to finish; calls (1):\n  #1 git log → default response, exit 0',
    );
  });
});

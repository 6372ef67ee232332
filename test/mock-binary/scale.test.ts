import { describe, expect, it } from 'vitest';
import { createMockBinary } from '../../src/index.js';
import type { CallStep } from '../../src/queue/types.js';
import { completion, spawnTracked } from '../helpers/index.js';
import { responses } from '../helpers/parallel.js';
import { stopCallsAt, waitUntilStopped } from '../helpers/protocol.js';

describe('scale and a test process that never waits for a call', () => {
  it('MB-19 enqueue(), calls(), assertDone() and reset() never wait for a call: with calls stopped at every step they return', async () => {
    const steps: CallStep[] = ['started', 'recorded', 'claimed', 'decided', 'served'];
    await using git = createMockBinary('git', { responses: responses(8) });
    const stopped = [];
    for (const step of steps) {
      stopCallsAt(git, step);
      const child = spawnTracked(git.path, [step]);
      stopped.push({ child, exited: completion(child) });
      await waitUntilStopped(child.pid);
    }
    stopCallsAt(git, undefined);
    // If any of these needed something a stopped call holds, this test would hang here.
    git.enqueue(responses(3));
    expect(git.queuedCount()).toBe(11);
    expect(git.callCount()).toBe(4); // 'started' stops before its record exists
    expect(git.calls().map((c) => [c.argv[0], c.status])).toEqual([
      ['recorded', 'running'],
      ['claimed', 'running'],
      ['decided', 'running'],
      ['served', 'running'],
    ]);
    expect(() => git.assertDone()).toThrow(/3 of 11 responses used/);
    git.reset();
    git.enqueue({ stdout: 'after reset\n' });
    expect(git.calls()).toEqual([]);
    for (const { child } of stopped) child.kill('SIGCONT');
    const results = await Promise.all(stopped.map((s) => s.exited));
    // Those stopped before their claim find their generation gone; the others finish as scripted.
    expect(results.map((r) => r.code)).toEqual([122, 122, 0, 0, 0]);
    expect(git.calls()).toEqual([]);
  });
});

// PERF-01 guard: a plain mocked call loads no Node module it does not need.
// Every module loaded at start costs each call ~1 ms under --jitless (os,
// net and child_process did, by mistake or by design); the bench measures
// the cost, this test keeps the modules out.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMockBinary } from '../../src/index.js';
import { runnerPath } from '../../src/internal/package-files.js';
import { RUNNER_FLAGS } from '../../src/mock-binary/runner-flags.js';
import { testDir } from '../helpers/index.js';

describe('the hot path', () => {
  it('PERF-01 a plain call, a routed call and a call with a live handler marker load no os, net, child_process or worker module', async () => {
    const hook = join(testDir(), 'modules.cjs');
    writeFileSync(
      hook,
      `process.on('exit', () => { require('fs').writeSync(2, 'MODULES ' + JSON.stringify(process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')))); });`,
    );
    await using plain = createMockBinary('git', { responses: [{ stdout: 'x\n' }] });
    await using routed = createMockBinary('gh', {
      responses: [{ match: { args: ['pr', 'view'] }, stdout: 'y\n' }],
    });
    await using live = createMockBinary('docker', { responses: [{ stdout: 'z\n' }] });
    live.handle(() => undefined); // the call checks the marker; a queued response wins
    for (const [mock, args] of [
      [plain, ['status']],
      [routed, ['pr', 'view']],
      [live, ['ps']],
    ] as const) {
      const r = spawnSync(
        process.execPath,
        [...RUNNER_FLAGS, '--require', hook, runnerPath(), mock.stateDir, ...args],
        { encoding: 'utf8', env: { PATH: process.env.PATH } },
      );
      expect(r.status, r.stderr).toBe(0);
      const modules: string[] = JSON.parse(r.stderr.slice(r.stderr.indexOf('MODULES ') + 8));
      const heavy = modules.filter((m) =>
        /NativeModule (os|net|child_process|worker_threads|dgram|tls|http)$/.test(m),
      );
      expect(heavy, `${mock.name}: ${heavy.join(', ')}`).toEqual([]);
    }
  });
});

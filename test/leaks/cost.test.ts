// LK-08: cheap enough to leave on. What it costs is measured by the bench
// (npm run bench -- sanitizer, bench/sanitizer.mjs); what is checked here is
// the clause that can be checked exactly: tests that run one at a time make
// the sanitizer use no async hooks (no AsyncLocalStorage, no createHook).
import { describe, expect, it } from 'vitest';
import { runCommand } from '../helpers/index.js';

describe('leak sanitizer: its cost', () => {
  it.runIf(process.platform === 'linux')(
    'LK-08 sequential scopes make no AsyncLocalStorage and no async hook; the first concurrent scope makes one AsyncLocalStorage',
    async () => {
      const dist = new URL('../../dist/index.js', import.meta.url).href;
      // A fresh node: async_hooks counted before shimkit is loaded (ESM named imports of a
      // builtin follow its exports once synced).
      const script = `
        import { createRequire, syncBuiltinESMExports } from 'node:module';
        const hooks = createRequire(import.meta.url)('node:async_hooks');
        const count = { storages: 0, hooks: 0 };
        const Storage = hooks.AsyncLocalStorage;
        hooks.AsyncLocalStorage = class extends Storage {
          constructor(...args) { super(...args); count.storages += 1; }
        };
        const createHook = hooks.createHook;
        hooks.createHook = (...args) => { count.hooks += 1; return createHook(...args); };
        syncBuiltinESMExports();
        const { createMockBinary, run, sanitize } = await import(${JSON.stringify(dist)});
        for (let i = 0; i < 20; i += 1) {
          const scope = sanitize.begin('test ' + i, { policy: 'off' });
          const git = createMockBinary('git', { responses: [{ stdout: 'ok' }] });
          await run('git', ['status'], { env: git.env() });
          await git.dispose();
          await scope.check();
        }
        const sequential = { ...count };
        const concurrent = sanitize.begin('concurrent', { concurrent: true, policy: 'off' });
        await concurrent.run(() => run('true'));
        await concurrent.check();
        console.log(JSON.stringify({ sequential, after: count }));
      `;
      const r = await runCommand(process.execPath, ['--input-type=module', '-e', script]);
      expect(r.stderr.toString()).toBe('');
      expect(JSON.parse(r.stdout.toString())).toEqual({
        sequential: { storages: 0, hooks: 0 },
        after: { storages: 1, hooks: 0 },
      });
    },
  );
});

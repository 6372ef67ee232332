/**
 * `shimkit/vitest/sanitize`: the leak sanitizer for every test of a vitest
 * suite (requirements LK-01…LK-07). Add it to `setupFiles`:
 *
 * @example
 * // vitest.config.ts
 * export default defineConfig({ test: { setupFiles: ['shimkit/vitest/sanitize'] } });
 * // a test that leaves something on purpose:
 * test('starts the daemon', { meta: { shimkit: { leaks: 'warn' } } }, async () => { … });
 *
 * Each test runs in its own scope (its cookie, its objects), `test.concurrent`
 * ones too; what the file's `beforeAll` and file fixtures make is judged
 * when the file ends. After a test, what it left is reported (one block),
 * cleaned, and fails the test under `CI=true` (warns elsewhere; see
 * `sanitize.configure()` and `SHIMKIT_LEAKS`).
 */

import { relative } from 'node:path';
import { type LeakPolicy, type LeakReport, sanitize } from 'shimkit';
import { afterAll, aroundEach, beforeAll, expect } from 'vitest';

declare module 'vitest' {
  interface TaskMeta {
    /** shimkit's per-test settings: `{ leaks: 'warn' }`, or a policy with an allow-list. */
    shimkit?: { leaks?: LeakPolicy };
  }
}

/** Fail the test with the report, or print it: what the policy says. */
function judge(report: LeakReport): void {
  const text = sanitize.format(report);
  if (report.failed.length > 0) {
    const error = new Error(text);
    error.name = 'LeakError';
    error.stack = `${error.name}: ${text}`; // the report is the whole story: no stack of this hook
    throw error;
  }
  if (text !== '') console.warn(text);
}

let fileScope: ReturnType<typeof sanitize.begin> | undefined;

beforeAll(() => {
  // vitest reads a hook's parameters (fixtures): this one takes none, and names the file from expect's state.
  const file = expect.getState().testPath;
  // The file scope has no TMPDIR of its own: what beforeAll writes stays where it always went.
  fileScope = sanitize.begin(file ? relative(process.cwd(), file) : 'test file', {
    scope: 'file',
    tmp: false,
  });
});

afterAll(async () => {
  const scope = fileScope;
  fileScope = undefined;
  if (scope) judge(await scope.check());
});

aroundEach(async (runTest, { task }) => {
  const scope = sanitize.begin(task.fullName, {
    policy: task.meta?.shimkit?.leaks,
    concurrent: task.concurrent === true,
  });
  let report: LeakReport;
  try {
    if (scope.concurrent) await scope.run(runTest);
    else await runTest();
  } finally {
    report = await scope.check();
  }
  judge(report);
});

import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * Three projects. `npm test` runs "shimkit", the fast suite: every requirement,
 * each at the size that proves it, in under two minutes on 2 cores.
 * `npm run test:stress` runs "stress" (test/**\/*.stress.test.ts: the storms,
 * the scale runs and the long property runs; and the type tests) and
 * "runner-only". `.ci/run` runs both.
 */
export default defineConfig({
  // shimkit/vitest imports the core as 'shimkit', and the README's examples
  // import both: the tests run them from src.
  resolve: {
    alias: [
      { find: /^shimkit$/, replacement: fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
      {
        find: /^shimkit\/vitest$/,
        replacement: fileURLToPath(new URL('./src/vitest/index.ts', import.meta.url)),
      },
    ],
  },
  test: {
    // Tests spawn real processes; generous per-test deadlines, but no retries:
    // a flake is a bug to fix, not to hide. Stress tests are sized in runs and
    // calls, never in seconds; their deadline only stops a hang.
    testTimeout: 60_000,
    hookTimeout: 30_000,
    retry: 0,
    pool: 'forks',
    // vitest's default on 2 cores is one worker: most of a test is waiting for
    // the processes it spawned, so two files at a time use the machine.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'shimkit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/**/*.stress.test.ts'],
          // A worker runs file after file instead of a fresh one per file (a
          // third of the suite's time went to starting them). Every test cleans
          // up what it made; the stress and runner-only projects keep isolation,
          // so CI runs the mock-binary suite both ways.
          isolate: false,
          // The leak sanitizer judges every test (LK-06): test/setup/leaks.ts
          // makes it fail on anything left, then the entry opens the scopes.
          setupFiles: ['test/setup/fast-env.ts', 'test/setup/leaks.ts', 'src/vitest/sanitize.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'stress',
          include: ['test/**/*.stress.test.ts'],
          testTimeout: 300_000,
          // The type tests (expectTypeOf) run here, as tests, and in `npm run
          // lint`, whose tsc checks the same files: not in the fast suite, where
          // tsc's 8 s of CPU would slow every other test.
          typecheck: { enabled: true, include: ['test/types/**/*.test-d.ts'] },
        },
      },
      {
        // The whole mock-binary suite once more with every call through the
        // runner (PERF-07: the sh shim's fast path and the runner must agree).
        extends: true,
        test: {
          name: 'runner-only',
          include: ['test/mock-binary/**/*.test.ts'],
          exclude: ['test/mock-binary/fast-path*.test.ts', 'test/**/*.stress.test.ts'],
          env: { SHIMKIT_FAST_PATH: '0' },
        },
      },
    ],
  },
});

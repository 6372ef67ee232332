import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // shimkit/vitest imports the core as 'shimkit': the tests run it from src.
  resolve: { alias: { shimkit: fileURLToPath(new URL('./src/index.ts', import.meta.url)) } },
  test: {
    // Tests spawn real processes; generous per-test deadlines, but no retries:
    // a flake is a bug to fix, not to hide.
    testTimeout: 60_000,
    hookTimeout: 30_000,
    retry: 0,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'shimkit',
          include: ['test/**/*.test.ts'],
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
          exclude: ['test/mock-binary/fast-path*.test.ts'],
          env: { SHIMKIT_FAST_PATH: '0' },
        },
      },
    ],
  },
});

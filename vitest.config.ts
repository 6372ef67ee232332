import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // shimkit/vitest imports the core as 'shimkit': the tests run it from src.
  resolve: { alias: { shimkit: fileURLToPath(new URL('./src/index.ts', import.meta.url)) } },
  test: {
    include: ['test/**/*.test.ts'],
    // Tests spawn real processes; generous per-test deadlines, but no retries:
    // a flake is a bug to fix, not to hide.
    testTimeout: 60_000,
    hookTimeout: 30_000,
    retry: 0,
    pool: 'forks',
    typecheck: { enabled: true, include: ['test/types/**/*.test-d.ts'] },
  },
});

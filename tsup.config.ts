import { defineConfig } from 'tsup';

export default defineConfig([
  {
    // The public door, as ESM + CJS with types for each.
    entry: { index: 'src/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    shims: true,
    target: 'node20',
    platform: 'node',
    sourcemap: true,
    clean: true,
  },
  {
    // The hot path: runs inside every mocked call. One small CommonJS file with
    // only node builtins, so Node starts it as fast as `node -e 0`.
    entry: { runner: 'src/runner/main.ts' },
    format: ['cjs'],
    outExtension: () => ({ js: '.cjs' }),
    target: 'node20',
    platform: 'node',
    minify: true,
    sourcemap: false,
    clean: false,
    noExternal: [/.*/],
  },
]);

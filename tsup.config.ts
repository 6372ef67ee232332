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
    // The maps name src/*.ts, which the package ships ("files"), so a stack
    // trace or a debugger opens a file that is there; no second copy inline.
    sourcemap: true,
    esbuildOptions(options) {
      options.sourcesContent = false;
    },
    clean: true,
  },
  {
    // shimkit/vitest and shimkit/jest: fixtures and matchers. They import the
    // core as the package itself ('shimkit', external here; tsconfig maps it
    // to src for type checks), so a test that also imports 'shimkit' shares
    // one copy of its state and its classes; vitest stays the user's own.
    entry: {
      vitest: 'src/vitest/index.ts',
      jest: 'src/jest/index.ts',
      'vitest-sanitize': 'src/vitest/sanitize.ts',
      'jest-sanitize': 'src/jest/sanitize.ts',
    },
    format: ['esm', 'cjs'],
    dts: true,
    shims: true,
    target: 'node20',
    platform: 'node',
    sourcemap: true,
    esbuildOptions(options) {
      options.sourcesContent = false;
    },
    clean: false,
    external: ['vitest', 'shimkit'],
  },
  {
    // The `shimkit` command: dist/cli.js dispatches (it holds none of the core)
    // and loads the module of the command it runs, dist/cli/NAME.js. Each is
    // bundled on its own from src, 'shimkit' (src/cli/ uses only the public
    // door) included and tree-shaken, so it holds only the part of the core
    // it uses: `shimkit enqueue` never loads the frame proxy or the sandbox,
    // and costs little more than a Node start (bench: cli.enqueueMs). Each is
    // its own process, so these copies of the core share no state with the
    // package's dist/index.js that matters.
    entry: {
      cli: 'src/cli/bin.ts',
      'cli/mock': 'src/cli/mock.ts',
      'cli/enqueue': 'src/cli/enqueue.ts',
      'cli/calls': 'src/cli/calls.ts',
      'cli/proxy': 'src/cli/proxy.ts',
      'cli/clean': 'src/cli/clean.ts',
      'cli/leaks': 'src/cli/leaks.ts',
      'cli/verify-pack': 'src/cli/verify-pack.ts',
      'cli/demo': 'src/cli/demo.ts',
      'cli/serve': 'src/cli/server/serve.ts',
      'cli/server': 'src/cli/server/commands.ts',
      // `shimkit enqueue D` on a server's dir, the command a test calls most: only what it needs.
      'cli/server-enqueue': 'src/cli/server/enqueue-form.ts',
    },
    format: ['esm'],
    target: 'node20',
    platform: 'node',
    splitting: false,
    sourcemap: false,
    clean: false,
    noExternal: ['shimkit'],
    esbuildOptions(options) {
      options.alias = { shimkit: './src/index.ts' };
    },
    banner: { js: '#!/usr/bin/env node' },
  },
  {
    // The hot path: runs inside every mocked call. A small CommonJS file with
    // only node builtins, so Node starts it about as fast as `node -e 0`, and
    // beside it what few calls need (src/runner/cold.ts), loaded on demand.
    entry: {
      runner: 'src/runner/main.ts',
      'runner-cold': 'src/runner/cold.ts',
      // The routed claim, for calls of a generation with `match` or `times`.
      'runner-route': 'src/runner/routing.ts',
      // A passthrough with a frame proxy on the real command's stdio.
      'runner-proxy': 'src/runner/faulted.ts',
      // Sweeps what a process left once it is gone, where exit handlers never run (jest).
      watcher: 'src/internal/leftovers/watcher-main.ts',
      // The mock server's worker thread (createMockServer): node:http, the claims, the writers.
      'server-worker': 'src/server/core/worker-main.ts',
    },
    format: ['cjs'],
    outExtension: () => ({ js: '.cjs' }),
    // runner-proxy reaches package-files.ts (import.meta.url) through the proxy's exit cleanup.
    shims: true,
    target: 'node20',
    platform: 'node',
    minify: true,
    sourcemap: false,
    clean: false,
    noExternal: [/.*/],
  },
]);

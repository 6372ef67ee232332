/**
 * `shimkit/vitest`: fixtures and matchers for vitest (requirements VT-01,
 * VT-02). Import `test` from here instead of from vitest:
 *
 * @example
 * import { test, expect } from 'shimkit/vitest';
 *
 * test('deploy pushes', async ({ mockBinary }) => {
 *   const git = mockBinary('git', { responses: [{ match: { argsPrefix: ['push'] } }] });
 *   await run('my-cli', ['deploy'], { env: git.env() });
 *   expect(git).toHaveBeenCalledWithArgs(['push', 'origin', 'main']);
 * }); // git is disposed here, strictly: an unused response fails the test
 */

import {
  type Address,
  createFrameProxy,
  createMockBinary,
  createMockBinDir,
  createSandbox,
  type FrameProxy,
  type FrameProxyOptions,
  type ListenAddress,
  type MockBinary,
  type MockBinaryOptions,
  type MockBinDir,
  type MockBinDirOptions,
  type SandboxOptions,
  type TestSandbox,
} from 'shimkit';
import { test as base, expect } from 'vitest';
import { matchers, type ShimkitMatchers } from '../matchers.js';

expect.extend(matchers);

declare module 'vitest' {
  // biome-ignore lint/suspicious/noExplicitAny: vitest's own declaration
  interface Assertion<T = any> extends ShimkitMatchers<T> {}
  interface AsymmetricMatchersContaining extends ShimkitMatchers {}
}

/** The fixtures `test` provides; each made thing is disposed after the test, even when it fails. */
export interface ShimkitFixtures {
  /**
   * `createMockBinary()`, strict by default (unexpected calls fail, and an
   * unused response fails the test at dispose), with a `timeoutMs` below the
   * test's own so a hung call shows shimkit's diagnostic, not a bare test timeout.
   */
  mockBinary: (name: string, options?: MockBinaryOptions) => MockBinary;
  /** `createMockBinDir()`; its mocks are strict by default too. */
  mockBinDir: (options?: MockBinDirOptions) => MockBinDir;
  /** `createSandbox()`. */
  sandbox: (options?: SandboxOptions) => TestSandbox;
  /** `createFrameProxy()`. */
  frameProxy: <L extends Address>(
    options: FrameProxyOptions<L>,
  ) => Promise<FrameProxy<ListenAddress<L>>>;
}

/** Options that cannot go with strict mode: given, the fixture leaves strict off. */
const NOT_STRICT = ['onExhausted', 'default', 'spy', 'cassette', 'strict'] as const;

function fixtureOptions(options: MockBinaryOptions, testTimeout: number): MockBinaryOptions {
  const made: MockBinaryOptions = { ...options };
  if (!NOT_STRICT.some((key) => options[key] !== undefined)) made.strict = true;
  if (options.timeoutMs === undefined) {
    made.timeoutMs = Math.max(100, Math.min(30_000, testTimeout - 1000));
  }
  return made;
}

/** Dispose everything made, all of it, then throw the first error. */
async function disposeAll(items: Array<{ dispose(): Promise<unknown> }>): Promise<void> {
  const errors: unknown[] = [];
  for (const item of items.reverse()) {
    try {
      await item.dispose();
    } catch (error) {
      errors.push(error);
    }
  }
  if (errors.length > 0) throw errors[0];
}

export const test = base.extend<ShimkitFixtures>({
  mockBinary: async ({ task }, use) => {
    const made: MockBinary[] = [];
    const timeout = (task as { timeout?: number }).timeout ?? 5000;
    await use((name, options = {}) => {
      const mock = createMockBinary(name, fixtureOptions(options, timeout));
      made.push(mock);
      return mock;
    });
    await disposeAll(made);
  },
  mockBinDir: async ({ task }, use) => {
    const made: MockBinDir[] = [];
    const timeout = (task as { timeout?: number }).timeout ?? 5000;
    await use((options) => {
      const bin = createMockBinDir(options);
      const mock = bin.mock.bind(bin);
      bin.mock = (name, mockOptions = {}) => mock(name, fixtureOptions(mockOptions, timeout));
      made.push(bin);
      return bin;
    });
    await disposeAll(made);
  },
  // biome-ignore lint/correctness/noEmptyPattern: vitest fixtures take their dependencies by destructuring
  sandbox: async ({}, use) => {
    const made: TestSandbox[] = [];
    await use((options) => {
      const sb = createSandbox(options);
      made.push(sb);
      return sb;
    });
    await disposeAll(made);
  },
  // biome-ignore lint/correctness/noEmptyPattern: see above
  frameProxy: async ({}, use) => {
    const made: FrameProxy[] = [];
    await use(async <L extends Address>(options: FrameProxyOptions<L>) => {
      const proxy = await createFrameProxy(options);
      made.push(proxy);
      return proxy;
    });
    await disposeAll(made.map((p) => ({ dispose: () => p.close() })));
  },
});

export { expect, matchers };
export const it = test;

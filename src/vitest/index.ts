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
    // A test timeout of 0 (or none) means no limit: the mock's own default then.
    made.timeoutMs =
      Number.isFinite(testTimeout) && testTimeout > 0
        ? Math.max(100, Math.min(30_000, testTimeout - 1000))
        : 30_000;
  }
  return made;
}

/**
 * What the fixtures of one test made, disposed together when it ends: the
 * sandboxes first (so the processes they track stop before the mocks they
 * call go), then proxies, then mocks and bin dirs. Every item is disposed
 * even when one throws; then the first error is thrown (the others are
 * named in its message), so one failing strict mock cannot leave a sandbox
 * or a proxy behind.
 */
class Scope {
  readonly sandboxes: TestSandbox[] = [];
  readonly proxies: FrameProxy[] = [];
  readonly mocks: Array<MockBinary | MockBinDir> = [];

  async dispose(): Promise<void> {
    const errors: unknown[] = [];
    const run = async (fn: () => Promise<unknown>) => {
      try {
        await fn();
      } catch (error) {
        errors.push(error);
      }
    };
    for (const sb of this.sandboxes.reverse()) await run(() => sb.dispose());
    for (const proxy of this.proxies.reverse()) await run(() => proxy.close());
    for (const mock of this.mocks.reverse()) await run(() => mock.dispose());
    if (errors.length === 0) return;
    const first = errors[0] as Error;
    if (errors.length > 1 && first instanceof Error) {
      first.message += `\n(and ${errors.length - 1} more: ${errors
        .slice(1)
        .map((e) => (e instanceof Error ? e.message.split('\n')[0] : String(e)))
        .join('; ')})`;
    }
    throw first;
  }
}

interface InternalFixtures {
  shimkitScope: Scope;
}

export const test = base.extend<ShimkitFixtures & InternalFixtures>({
  shimkitScope: [
    // biome-ignore lint/correctness/noEmptyPattern: vitest fixtures take their dependencies by destructuring
    async ({}, use) => {
      const scope = new Scope();
      await use(scope);
      await scope.dispose();
    },
    { auto: true },
  ],
  mockBinary: async ({ task, shimkitScope }, use) => {
    const timeout = (task as { timeout?: number }).timeout ?? 5000;
    await use((name, options = {}) => {
      const mock = createMockBinary(name, fixtureOptions(options, timeout));
      shimkitScope.mocks.push(mock);
      return mock;
    });
  },
  mockBinDir: async ({ task, shimkitScope }, use) => {
    const timeout = (task as { timeout?: number }).timeout ?? 5000;
    await use((options) => {
      const bin = createMockBinDir(options);
      const mock = bin.mock.bind(bin);
      bin.mock = (name, mockOptions = {}) => mock(name, fixtureOptions(mockOptions, timeout));
      shimkitScope.mocks.push(bin);
      return bin;
    });
  },
  sandbox: async ({ shimkitScope }, use) => {
    await use((options) => {
      const sb = createSandbox(options);
      shimkitScope.sandboxes.push(sb);
      return sb;
    });
  },
  frameProxy: async ({ shimkitScope }, use) => {
    await use(async <L extends Address>(options: FrameProxyOptions<L>) => {
      const proxy = await createFrameProxy(options);
      shimkitScope.proxies.push(proxy);
      return proxy;
    });
  },
});

export { expect, matchers };
export const it = test;

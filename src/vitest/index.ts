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
  createMockServer,
  createSandbox,
  type FrameProxy,
  type FrameProxyOptions,
  type ListenAddress,
  type MockBinary,
  type MockBinaryOptions,
  type MockBinDir,
  type MockBinDirOptions,
  type MockServer,
  type MockServerOptions,
  type SandboxOptions,
  ShimkitError,
  type TestSandbox,
} from 'shimkit';
import { test as base, expect } from 'vitest';
import { DEFAULT_WAIT_MS } from '../internal/limits.js';
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
   * unused response fails the test at dispose), with a `timeoutMs` 1 s below
   * the shorter of the test's timeout and the 4 s default of `run()` and the
   * waits (so 3 s under vitest's 5 s default): a hung call ends in shimkit's
   * diagnostic (on its stderr, in `run()`'s result and in the dispose report)
   * before `run()` or the test gives up. Pass `timeoutMs` for a call meant to
   * take longer.
   */
  mockBinary: (name: string, options?: MockBinaryOptions) => MockBinary;
  /** `createMockBinDir()`; its mocks are strict by default too. */
  mockBinDir: (options?: MockBinDirOptions) => MockBinDir;
  /** `createSandbox()`. */
  sandbox: (options?: SandboxOptions) => TestSandbox;
  /**
   * `createMockServer()`, strict unless `unmatched` or `cassette` is given
   * (an unmatched request or an unused response fails the test at dispose),
   * with a `timeoutMs` 1 s below the shorter of the test's timeout and the
   * 4 s default wait, as for `mockBinary`: a function response or a hold the
   * test never answers ends in the server's diagnostic before the test gives up.
   */
  mockServer: (options?: MockServerOptions) => Promise<MockServer>;
  /** `createFrameProxy()`. */
  frameProxy: <L extends Address>(
    options: FrameProxyOptions<L>,
  ) => Promise<FrameProxy<ListenAddress<L>>>;
}

/** Options that cannot go with strict mode: given, the fixture leaves strict off. */
const NOT_STRICT = ['onExhausted', 'default', 'spy', 'cassette', 'strict'] as const;

/** A mock server's options that cannot go with strict mode. */
const SERVER_NOT_STRICT = ['unmatched', 'cassette', 'strict'] as const;

/** Below what gives up first: the test (a timeout of 0 means none) or a default wait. */
function fixtureTimeout(testTimeout: number): number {
  const limit = Number.isFinite(testTimeout) && testTimeout > 0 ? testTimeout : Infinity;
  return Math.max(100, Math.min(limit, DEFAULT_WAIT_MS) - 1000);
}

function fixtureOptions(options: MockBinaryOptions, testTimeout: number): MockBinaryOptions {
  const made: MockBinaryOptions = { ...options };
  if (!NOT_STRICT.some((key) => options[key] !== undefined)) made.strict = true;
  if (options.timeoutMs === undefined) made.timeoutMs = fixtureTimeout(testTimeout);
  return made;
}

function serverOptions(options: MockServerOptions, testTimeout: number): MockServerOptions {
  const made: MockServerOptions = { ...options };
  if (!SERVER_NOT_STRICT.some((key) => options[key] !== undefined)) made.strict = true;
  if (options.timeoutMs === undefined) made.timeoutMs = fixtureTimeout(testTimeout);
  return made;
}

/**
 * What the fixtures of one test made, disposed together when it ends: the
 * sandboxes first (so the processes they track stop before the mocks they
 * call go), then mock servers, proxies, and mocks and bin dirs. Every item is disposed
 * even when one throws; then the first error is thrown (the others are
 * named in its message), so one failing strict mock cannot leave a sandbox
 * or a proxy behind. When the test itself had failed, the message says so
 * first: an unused response is then most likely what the failure left, not
 * the cause.
 */
class Scope {
  readonly sandboxes: TestSandbox[] = [];
  readonly servers: MockServer[] = [];
  readonly proxies: FrameProxy[] = [];
  readonly mocks: Array<MockBinary | MockBinDir> = [];

  async dispose(testFailed: boolean): Promise<void> {
    // A failed test gets what its mocks' calls printed when they did not go
    // as scripted (a timeout, no response, a broken call): often the cause.
    const said = testFailed ? this.mocks.flatMap(callDiagnostics) : [];
    const errors: unknown[] = [];
    const run = async (fn: () => Promise<unknown>) => {
      try {
        await fn();
      } catch (error) {
        errors.push(error);
      }
    };
    for (const sb of this.sandboxes.reverse()) await run(() => sb.dispose());
    for (const server of this.servers.reverse()) await run(() => server.dispose());
    for (const proxy of this.proxies.reverse()) await run(() => proxy.close());
    for (const mock of this.mocks.reverse()) await run(() => mock.dispose());
    const printed = said.map((line) => `\n  ${line}`).join('');
    if (errors.length === 0) {
      if (printed === '') return;
      throw new ShimkitError(
        'ERR_SHIMKIT_FAILED_TEST_CALLS',
        `the test failed (its error is reported before this one); calls to its mocks printed:${printed}`,
      );
    }
    const first = errors[0] as Error;
    if (errors.length > 1 && first instanceof Error) {
      first.message += `\n(and ${errors.length - 1} more: ${errors
        .slice(1)
        .map((e) => (e instanceof Error ? e.message.split('\n')[0] : String(e)))
        .join('; ')})`;
    }
    if (testFailed && first instanceof Error) {
      const calls = printed === '' ? '' : `\ncalls to its mocks printed:${printed}`;
      first.message = `the test failed first (its error is reported before this one); then disposing its fixtures found: ${first.message}${calls}`;
    }
    throw first;
  }
}

/** The diagnostic lines of a mock's (or a bin dir's mocks') calls; none once it was disposed. */
function callDiagnostics(made: MockBinary | MockBinDir): string[] {
  try {
    const mocks = 'mocks' in made ? made.mocks() : [made];
    return mocks.flatMap((mock) =>
      mock.calls().flatMap((call) => (call.diagnostic ? [call.diagnostic] : [])),
    );
  } catch {
    return []; // disposed by the test itself
  }
}

interface InternalFixtures {
  shimkitScope: Scope;
}

export const test = base.extend<ShimkitFixtures & InternalFixtures>({
  // Not `auto`: an auto fixture is torn down after every aroundEach hook, so the
  // leak sanitizer (shimkit/vitest/sanitize) would judge the test before its
  // fixtures were disposed. It is set up with the first fixture that uses it.
  shimkitScope: async ({ task }, use) => {
    const scope = new Scope();
    await use(scope);
    // By teardown vitest has recorded how the test body ended.
    await scope.dispose(task.result?.state === 'fail');
  },
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
  mockServer: async ({ task, shimkitScope }, use) => {
    const timeout = (task as { timeout?: number }).timeout ?? 5000;
    await use(async (options = {}) => {
      const server = await createMockServer(serverOptions(options, timeout));
      shimkitScope.servers.push(server);
      return server;
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

export type { ToolResultExpectation } from '../matchers.js';
export { expect, matchers };
export const it = test;

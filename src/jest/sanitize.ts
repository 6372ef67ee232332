/**
 * `shimkit/jest/sanitize`: the leak sanitizer for every test of a jest
 * suite (requirements LK-01…LK-07), with jest-circus (jest's default
 * runner). Add it to `setupFilesAfterEnv`:
 *
 * @example
 * // jest.config.js
 * module.exports = { setupFilesAfterEnv: ['shimkit/jest/sanitize'] };
 * // a test that leaves something on purpose:
 * test('starts the daemon', async () => { sanitize.policy('warn'); … });
 *
 * Each test's scope opens before its `beforeEach` hooks and is checked after
 * its `afterEach` hooks (jest-circus's `test_start` and `test_done`), so a
 * test file's own `afterEach` disposes first. What the file's `beforeAll`
 * makes is judged when the file ends. Each jest worker is its own process
 * with its own cookies, so parallel files are told apart.
 */
import { relative } from 'node:path';
import { type LeakReport, type LeakScope, sanitize } from 'shimkit';

interface CircusTest {
  name: string;
  parent?: CircusBlock;
  errors: unknown[];
}
interface CircusBlock {
  name: string;
  parent?: CircusBlock;
}
type CircusEvent =
  | { name: 'test_start'; test: CircusTest }
  | { name: 'test_done'; test: CircusTest }
  | { name: 'run_finish' }
  | { name: string };
interface CircusState {
  unhandledErrors: unknown[];
  testPath?: string;
}
type Handler = (event: CircusEvent, state: CircusState) => void | Promise<void>;

const handlers = (globalThis as Record<symbol, unknown>)[Symbol.for('EVENT_HANDLERS')] as
  | Handler[]
  | undefined;
if (!Array.isArray(handlers)) {
  throw new Error(
    "shimkit/jest/sanitize needs jest-circus, jest's default runner (testRunner: 'jest-circus/runner'): no circus event handlers here. With vitest, use 'shimkit/vitest/sanitize'.",
  );
}

/** The test file, relative to the working dir, from jest's expect state. */
const testPath = (
  globalThis as { expect?: { getState?: () => { testPath?: string } } }
).expect?.getState?.().testPath;
const testFile = testPath ? relative(process.cwd(), testPath) : undefined;

function fullName(test: CircusTest): string {
  const names = [test.name];
  for (let block = test.parent; block; block = block.parent) {
    if (block.name !== 'ROOT_DESCRIBE_BLOCK') names.unshift(block.name);
  }
  if (testFile) names.unshift(testFile);
  return names.join(' > ');
}

function leakError(report: LeakReport): Error | undefined {
  const text = sanitize.format(report);
  if (report.failed.length > 0) {
    const error = new Error(text);
    error.name = 'LeakError';
    error.stack = `${error.name}: ${text}`;
    return error;
  }
  if (text !== '') console.warn(text);
  return undefined;
}

const fileScope: LeakScope = sanitize.begin(testFile ?? 'test file', { scope: 'file', tmp: false });
const tests = new Map<CircusTest, LeakScope>();

const handler: Handler = async (event, state) => {
  if (event.name === 'test_start') {
    const { test } = event as { test: CircusTest };
    tests.set(test, sanitize.begin(fullName(test)));
  } else if (event.name === 'test_done') {
    const { test } = event as { test: CircusTest };
    const scope = tests.get(test);
    tests.delete(test);
    if (scope === undefined) return;
    const error = leakError(await scope.check());
    if (error) test.errors.push(error);
  } else if (event.name === 'run_finish') {
    const error = leakError(await fileScope.check());
    if (error) state.unhandledErrors.push(error);
  }
};
// First, so a test's errors are in before jest reports it.
handlers.unshift(handler);

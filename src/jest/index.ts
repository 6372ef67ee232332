/**
 * `shimkit/jest`: the shimkit matchers for jest (requirement VT-02). Import it
 * once in a setup file (`setupFilesAfterEnv: ['shimkit/jest']`) or at the
 * top of a test file; dispose mocks in `afterEach` (or use `await using`).
 *
 * @example
 * require('shimkit/jest');
 * afterEach(() => git.dispose());
 * expect(git).toHaveBeenCalledWithArgs(['push', any()]);
 */
import { matchers, type ShimkitMatchers } from '../matchers.js';

declare const expect: { extend(m: object): void } | undefined;

declare global {
  namespace jest {
    interface Matchers<R> extends ShimkitMatchers<R> {}
  }
}

if (typeof expect === 'undefined' || typeof expect?.extend !== 'function') {
  throw new Error(
    "shimkit/jest: no jest `expect` global here. Import it from a jest test file or setup file; with vitest use 'shimkit/vitest'.",
  );
}
expect.extend(matchers);

export type { ToolResultExpectation } from '../matchers.js';
export { matchers };

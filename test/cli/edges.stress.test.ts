// CLI-01 races of the shimkit command, many rounds. npm run test:stress.
import { describe, it } from 'vitest';
import { expectConcurrentMocksBothKept } from './helpers.js';

describe('CLI-01 the shimkit command racing itself (stress)', () => {
  it('CLI-01 two shimkit mock at once on one new dir: both mocks are there, neither run deletes the other (16 rounds)', () =>
    expectConcurrentMocksBothKept(16));
});

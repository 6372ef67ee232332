// SP-05 at full size. npm run test:stress.
import { describe, it } from 'vitest';
import { expectFlatMemoryUnderOutput } from '../helpers/sized.js';

describe('bounded tails (stress)', () => {
  it('SP-05 memory stays flat while the child writes 1 GiB to stdout', () =>
    expectFlatMemoryUnderOutput(1024));
});

// PX-01 PX-05 at full size. npm run test:stress.
import { describe, it } from 'vitest';
import { expectFramesPassThrough } from '../helpers/sized.js';

describe('pass-through (stress)', () => {
  it('PX-01 PX-05 10,000 frames of 0 B to 1 MiB each way arrive byte-identical and in order; counters match', () =>
    expectFramesPassThrough(10_000));
});

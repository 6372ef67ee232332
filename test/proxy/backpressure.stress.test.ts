// PX-06 backpressure at full size. npm run test:stress.
import { describe, it } from 'vitest';
import { expectProxyHoldsBackAStalledReader } from '../helpers/sized.js';

describe('backpressure (stress)', () => {
  it('PX-06 a stalled reader: the proxy holds about a frame plus socket buffers while the client streams 1 GiB', () =>
    expectProxyHoldsBackAStalledReader(1024));
});

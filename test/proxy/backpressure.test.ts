// PX-06 backpressure (1 GiB of it in backpressure.stress.test.ts).
import { describe, it } from 'vitest';
import { expectProxyHoldsBackAStalledReader } from '../helpers/sized.js';

describe('backpressure', () => {
  it('PX-06 a stalled reader: the proxy holds about a frame plus socket buffers while the client streams 128 MiB', () =>
    expectProxyHoldsBackAStalledReader(128));
});

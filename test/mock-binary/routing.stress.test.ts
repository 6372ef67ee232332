// MB-13 at full size: 64 routed calls in 4 shapes, and 40 calls for two
// responses of times: 10 with SIGKILLs. npm run test:stress.
import { describe, it } from 'vitest';
import { expectRoutedShapesExactlyOnce, expectTimesBoundUnderKills } from '../helpers/sized.js';

describe('routing at full size (stress)', () => {
  it('MB-13 64 parallel calls in 4 argv shapes, arriving in random order, each get one of their own responses exactly once', () =>
    expectRoutedShapesExactlyOnce(16));

  it('MB-13 a response with times: n answers at most n of many parallel calls (40), some SIGKILLed mid-call', () =>
    expectTimesBoundUnderKills(40));
});

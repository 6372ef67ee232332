// MB-20 at full size: 50 MiB responses, 69 callers racing reset() and dispose(),
// and three 64-call SIGKILL storms right before dispose(). npm run test:stress.
import { describe, it } from 'vitest';
import {
  expectBigResponsesOutsideTheQueue,
  expectCallersSurviveResetAndDispose,
  expectDisposeAfterKillsLeavesNothing,
} from '../helpers/sized.js';

describe('hostile environments at full size (stress)', () => {
  it('MB-20 large outputs live outside the queue file: eleven 50 MiB responses enqueue, and each call reads only its own', () =>
    expectBigResponsesOutsideTheQueue(50));

  it('MB-20 69 callers racing reset() and dispose() succeed or get the clear message, never an unexpected error', () =>
    expectCallersSurviveResetAndDispose(69));

  it.each([1, 2, 3])(
    'MB-20 dispose() right after callers were SIGKILLed mid-storm (64 calls) succeeds and leaves nothing (round %i)',
    () => expectDisposeAfterKillsLeavesNothing(64),
  );
});

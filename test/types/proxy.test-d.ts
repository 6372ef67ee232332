import { describe, expectTypeOf, it } from 'vitest';
import {
  createFrameProxy,
  type FaultAction,
  type FaultRule,
  type FrameProxy,
  type FrameProxyStats,
  type FrameTooLargeError,
  type SeedFaultPlan,
  type ShimkitError,
} from '../../src/index.js';

describe('frame proxy types', () => {
  it('createFrameProxy resolves to a disposable FrameProxy', () => {
    expectTypeOf(createFrameProxy).returns.resolves.toEqualTypeOf<FrameProxy>();
    expectTypeOf<FrameProxy['stats']>().returns.toEqualTypeOf<FrameProxyStats>();
    expectTypeOf<FrameProxy['forwarded']>().parameter(0).toEqualTypeOf<'c2s' | 's2c'>();
    expectTypeOf<FrameProxy[typeof Symbol.asyncDispose]>().toBeFunction();
  });

  it('fault rules and the seed plan are typed', () => {
    expectTypeOf<FaultRule['action']>().toEqualTypeOf<FaultAction>();
    expectTypeOf<'drop'>().toMatchTypeOf<FaultAction>();
    // @ts-expect-error not an action
    const bad: FaultRule = { action: 'explode' };
    expectTypeOf(bad).toEqualTypeOf<FaultRule>();
    expectTypeOf<SeedFaultPlan>().toHaveProperty('drop_frame');
    expectTypeOf<{ direction: 'c2s'; drop_frame: 2 }>().toMatchTypeOf<SeedFaultPlan>();
  });

  it('proxy errors are ShimkitErrors with their details', () => {
    expectTypeOf<FrameTooLargeError>().toMatchTypeOf<ShimkitError>();
    expectTypeOf<FrameTooLargeError['declaredLength']>().toBeNumber();
    expectTypeOf<FrameTooLargeError['direction']>().toEqualTypeOf<'c2s' | 's2c'>();
  });
});

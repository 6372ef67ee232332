import { describe, expectTypeOf, it } from 'vitest';
import {
  type LeakedProcess,
  type LeakReport,
  type LeakScope,
  type ReportedProcess,
  type SanitizeOptions,
  sanitize,
} from '../../src/index.js';

describe('leak sanitizer types', () => {
  it('LK-01 begin() gives a scope whose check() resolves a report of plain data', () => {
    expectTypeOf(sanitize.begin).parameters.toEqualTypeOf<
      [label: string, options?: SanitizeOptions]
    >();
    expectTypeOf(sanitize.begin('t')).toEqualTypeOf<LeakScope>();
    expectTypeOf<LeakScope['check']>().returns.resolves.toEqualTypeOf<LeakReport>();
    expectTypeOf(sanitize.check).returns.resolves.toEqualTypeOf<LeakReport>();
    expectTypeOf<LeakReport['processes']>().toEqualTypeOf<ReportedProcess[]>();
    expectTypeOf<ReportedProcess>().toExtend<LeakedProcess>();
    expectTypeOf<LeakedProcess['parents'][number]>().toEqualTypeOf<{
      pid: number;
      argv: string[];
    }>();
    expectTypeOf(sanitize.format).returns.toEqualTypeOf<string>();
  });
});

// PERF-11: the statistics `npm run bench:compare` flags changes with.
import { describe, expect, it } from 'vitest';
import {
  compareFigure,
  mannWhitneyP,
  ratioInterval,
  smallestP,
  stars,
} from '../../bench/stats.mjs';

describe('bench:compare statistics', () => {
  it('PERF-11 the Mann–Whitney p-value is exact: it matches the counted distribution', () => {
    // All of one side above the other: 2 of the C(6,3) = 20 splits are as extreme.
    expect(mannWhitneyP([1, 2, 3], [4, 5, 6])).toBeCloseTo(0.1, 12);
    expect(mannWhitneyP([6, 5, 4], [1, 2, 3])).toBeCloseTo(0.1, 12);
    expect(mannWhitneyP([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])).toBeCloseTo(2 / 252, 12);
    // Interleaved: U = 6 of 16; the exact two-sided p (as scipy's method='exact' gives) is 48/70.
    expect(mannWhitneyP([1, 3, 5, 7], [2, 4, 6, 8])).toBeCloseTo(48 / 70, 12);
    expect(smallestP(3, 3)).toBeCloseTo(0.1, 12);
    expect(smallestP(8, 8)).toBeCloseTo(2 / 12870, 12);
  });

  it('PERF-11 ties take their mid-rank: identical rounds give p = 1, never a change', () => {
    expect(mannWhitneyP([7, 7, 7, 7], [7, 7, 7, 7])).toBe(1);
    const same = compareFigure([0, 0, 0], [0, 0, 0]);
    expect(same.changed).toBe(false);
    expect(same.change).toBeUndefined();
    // One tie across the sides: the p-value still counts every split.
    const p = mannWhitneyP([1, 2, 3], [3, 4, 5]);
    expect(p).toBeGreaterThan(0.1);
    expect(p).toBeLessThan(0.5);
  });

  it('PERF-11 a shift beyond the noise is flagged; the same shift inside it is not', () => {
    const old = [100, 104, 98, 101, 103, 99, 102, 100];
    const faster = old.map((v) => v * 1.2);
    const verdict = compareFigure(old, faster);
    expect(verdict.changed).toBe(true);
    expect(verdict.change).toBeCloseTo(0.2, 6);
    expect(verdict.p).toBeLessThan(0.001);
    expect(stars(verdict.p)).toBe('***');
    const [low, high] = verdict.interval ?? [0, 0];
    expect(low).toBeGreaterThan(1);
    expect(high).toBeLessThan(1.3);
    // Noise of ±30 % around both: a 5 % shift of the medians is not called a change.
    const noisyOld = [70, 130, 95, 110, 85, 120, 100, 90];
    const noisyNew = [75, 128, 100, 115, 90, 126, 105, 94];
    const noisy = compareFigure(noisyOld, noisyNew);
    expect(noisy.changed).toBe(false);
    expect(stars(noisy.p)).toBe('');
  });

  it('PERF-11 the bootstrap interval is the same for the same rounds and holds the true ratio', () => {
    const a = [10, 11, 9, 10.5, 9.5, 10.2];
    const b = [20, 22, 18, 21, 19, 20.4];
    expect(ratioInterval(a, b)).toEqual(ratioInterval(a, b));
    const [low, high] = ratioInterval(a, b) ?? [0, 0];
    expect(low).toBeLessThanOrEqual(2);
    expect(high).toBeGreaterThanOrEqual(2);
    expect(ratioInterval([0, 1], [1, 2])).toBeUndefined();
  });
});

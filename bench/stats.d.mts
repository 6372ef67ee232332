// Types of bench/stats.mjs, for the tests that import it.

export interface Side {
  median: number;
  min: number;
  max: number;
  rounds: number;
}

export interface FigureComparison {
  old: Side;
  new: Side;
  /** new median ÷ old median − 1; undefined when the old median is 0. */
  change: number | undefined;
  /** Exact two-sided Mann–Whitney p-value. */
  p: number;
  /** 95 % bootstrap interval for new ÷ old medians. */
  interval: [number, number] | undefined;
  /** p < 0.05 and the interval leaves out 1. */
  changed: boolean;
}

export function median(values: number[]): number;
export function mannWhitneyP(a: number[], b: number[]): number;
export function smallestP(m: number, n: number): number;
export function ratioInterval(
  a: number[],
  b: number[],
  options?: { draws?: number; seed?: number },
): [number, number] | undefined;
export function stars(p: number): string;
export function compareFigure(old: number[], now: number[]): FigureComparison;

// The statistics behind `npm run bench:compare`: whether two sets of rounds
// (one figure, measured on two builds in alternating rounds) differ beyond the
// noise. Two tools, both free of any assumption about the shape of the noise:
//
// - the Mann–Whitney U (Wilcoxon rank-sum) test, exact: every way of splitting
//   the pooled rounds into two groups of those sizes is counted (ties take
//   their mid-rank), so the p-value is true for 3 rounds as for 30;
// - a bootstrap interval for the ratio of the medians (new ÷ old), from a
//   seeded generator, so the same rounds print the same interval.

import { median } from './lib.mjs';

export { median };

/** Ranks 1…n of the pooled values, ties sharing their mean rank; doubled, so they stay integers. */
function doubledRanks(values) {
  const order = values.map((v, i) => [v, i]).sort((a, b) => a[0] - b[0]);
  const ranks = new Array(values.length);
  for (let i = 0; i < order.length; ) {
    let j = i;
    while (j + 1 < order.length && order[j + 1][0] === order[i][0]) j++;
    const doubled = i + 1 + (j + 1); // (first rank + last rank), the mean rank doubled
    for (let k = i; k <= j; k++) ranks[order[k][1]] = doubled;
    i = j + 1;
  }
  return ranks;
}

/**
 * The exact two-sided p-value of the Mann–Whitney U test of `a` against `b`:
 * the share of all C(m+n, m) ways of drawing m of the pooled rounds whose rank
 * sum lies at least as far from its mean as `a`'s does. Counted by dynamic
 * programming over (rounds drawn, doubled rank sum), so 20 + 20 rounds take
 * well under a millisecond. NaN when either side has no rounds.
 */
export function mannWhitneyP(a, b) {
  const m = a.length;
  const n = b.length;
  if (m === 0 || n === 0) return Number.NaN;
  const ranks = doubledRanks([...a, ...b]);
  const total = ranks.reduce((s, r) => s + r, 0);
  const observed = ranks.slice(0, m).reduce((s, r) => s + r, 0);
  const mean = (total * m) / (m + n);
  const distance = Math.abs(observed - mean);
  // ways[k][s]: ways to draw k of the ranks seen so far with doubled sum s (floats: C(40,20) > 2^53 is fine as a share).
  let ways = Array.from({ length: m + 1 }, () => new Float64Array(total + 1));
  ways[0][0] = 1;
  for (const rank of ranks) {
    const next = ways.map((row) => Float64Array.from(row));
    for (let k = 0; k < m; k++) {
      const row = ways[k];
      const into = next[k + 1];
      for (let s = 0; s + rank <= total; s++) if (row[s] !== 0) into[s + rank] += row[s];
    }
    ways = next;
  }
  let all = 0;
  let extreme = 0;
  const last = ways[m];
  for (let s = 0; s <= total; s++) {
    if (last[s] === 0) continue;
    all += last[s];
    // A small tolerance: mid-ranks make sums like x.5, doubled to integers, so distances compare exactly.
    if (Math.abs(s - mean) >= distance - 1e-9) extreme += last[s];
  }
  return Math.min(1, extreme / all);
}

/** The smallest two-sided p-value m and n rounds can give (all of one side above all of the other). */
export function smallestP(m, n) {
  let choose = 1;
  for (let i = 1; i <= m; i++) choose = (choose * (n + i)) / i;
  return Math.min(1, 2 / choose);
}

/** A small seeded generator (mulberry32): the bootstrap draws the same resamples every time. */
function generator(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A 95 % percentile-bootstrap interval for median(b) ÷ median(a): each side
 * resampled with replacement `draws` times. Undefined when a median of `a`
 * can be 0 (no ratio to take).
 */
export function ratioInterval(a, b, { draws = 4000, seed = 1 } = {}) {
  if (a.length === 0 || b.length === 0 || a.some((v) => v === 0)) return undefined;
  const random = generator(seed);
  const resample = (values) =>
    median(Array.from(values, () => values[Math.floor(random() * values.length)]));
  const ratios = new Float64Array(draws);
  for (let i = 0; i < draws; i++) ratios[i] = resample(b) / resample(a);
  ratios.sort();
  return [ratios[Math.floor(0.025 * draws)], ratios[Math.ceil(0.975 * draws) - 1]];
}

/** Node's benchmark/compare.R marks: *** p < 0.001, ** p < 0.01, * p < 0.05. */
export function stars(p) {
  if (!(p < 0.05)) return '';
  if (p < 0.001) return '***';
  if (p < 0.01) return '**';
  return '*';
}

/**
 * One figure's verdict: both medians and ranges, the change of the median,
 * the p-value and the interval. `changed` only when the test says so (p <
 * 0.05) and the interval leaves out 1 (no change) — a difference the noise
 * could have made is never flagged.
 */
export function compareFigure(old, now) {
  const p = mannWhitneyP(old, now);
  const oldMedian = median(old);
  const newMedian = median(now);
  const interval = ratioInterval(old, now);
  const change = oldMedian === 0 ? undefined : newMedian / oldMedian - 1;
  const changed =
    p < 0.05 &&
    (interval === undefined ? oldMedian !== newMedian : interval[0] > 1 || interval[1] < 1);
  return {
    old: { median: oldMedian, min: Math.min(...old), max: Math.max(...old), rounds: old.length },
    new: { median: newMedian, min: Math.min(...now), max: Math.max(...now), rounds: now.length },
    change,
    p,
    interval,
    changed,
  };
}

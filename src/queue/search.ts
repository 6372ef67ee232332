/**
 * Where to start looking for a free number. Claim markers and call records
 * are only ever created at the lowest free number (a caller moves past a
 * number only after finding it taken), so the taken numbers are always a
 * prefix 1..m; an exponential then binary search by existence finds m + 1 in
 * O(log m) cheap lookups, with no shared cursor file to write on every call.
 *
 * The answer is only a hint: numbers are taken with exclusive links, so a
 * stale answer (someone took m + 1 meanwhile) costs one more step, never a
 * wrong result.
 */
export function firstFree(taken: (n: number) => boolean, max = Number.MAX_SAFE_INTEGER): number {
  let low = 0; // 0, or a number known to be taken
  let probe = 1;
  while (probe <= max && taken(probe)) {
    low = probe;
    probe *= 2;
  }
  let high = Math.min(probe, max + 1); // free, or one past max
  while (high - low > 1) {
    const mid = low + Math.floor((high - low) / 2);
    if (taken(mid)) low = mid;
    else high = mid;
  }
  return high;
}

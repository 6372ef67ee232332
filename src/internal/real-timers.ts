/**
 * The clock and timers as they were when shimkit loaded: a test that calls
 * `vi.useFakeTimers()` (or jest's) and does not restore them must not stop
 * the leak sanitizer's waits after it, which run on real time.
 */
const realSetTimeout = globalThis.setTimeout;
const realClearTimeout = globalThis.clearTimeout;
const realPerformanceNow = performance.now.bind(performance);

/** Milliseconds on a monotonic clock no fake timer moves. */
export function realNow(): number {
  return realPerformanceNow();
}

/** Resolve after `ms` of real time. */
export function realDelay(ms: number): Promise<void> {
  return new Promise((resolve) => realSetTimeout(resolve, ms));
}

/** A real timer, and its clear. */
export function realTimeout(fn: () => void, ms: number): { clear(): void } {
  const timer = realSetTimeout(fn, ms);
  return { clear: () => realClearTimeout(timer) };
}

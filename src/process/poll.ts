const POLL_MS = 10;

/** Poll `condition` every few ms until it holds (true) or `limitMs` passes (false). */
export async function until(condition: () => boolean, limitMs: number): Promise<boolean> {
  const deadline = performance.now() + limitMs;
  while (!condition()) {
    if (performance.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return true;
}

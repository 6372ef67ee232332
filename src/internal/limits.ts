/**
 * The default deadline of every wait a test awaits — `waitForCalls()`,
 * `run()`, `waitForOutput()`, `send()`, the proxy's and a FrameReader's
 * `waitForFrames()`/`waitForEnd()`: below the 5 s default test timeout of
 * vitest and jest, so that shimkit's own diagnostic (what was awaited, what
 * came so far) shows when a wait fails, not the runner's generic timeout,
 * and so that `run()` has closed its process tree before the runner gives up.
 */
export const DEFAULT_WAIT_MS = 4000;

/** The longest delay a Node timer honours (about 24.8 days); longer ones fire at once. */
export const MAX_TIMER_MS = 2_147_483_647;

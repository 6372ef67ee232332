/**
 * Where a public function was called from, for messages about an object it
 * made that was left behind (a strict mock server never disposed): the
 * first stack frame above `fn`, as V8 prints it (`file:///…/x.test.ts:12:21`,
 * or `Object.<anonymous> (/…/x.test.js:3:7)`). Only that one frame is
 * captured, so it costs little; undefined where there is no stack.
 */
// biome-ignore lint/complexity/noBannedTypes: any function may be the frame to start above
export function callerFrame(fn: Function): string | undefined {
  const holder: { stack?: string } = {};
  const limit = Error.stackTraceLimit;
  try {
    Error.stackTraceLimit = 1;
    Error.captureStackTrace(holder, fn);
    const frame = holder.stack?.split('\n')[1]?.trim();
    return frame?.startsWith('at ') ? frame.slice(3) : undefined;
  } catch {
    return undefined;
  } finally {
    Error.stackTraceLimit = limit;
  }
}

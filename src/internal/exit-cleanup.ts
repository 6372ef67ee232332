import { onExit } from 'signal-exit';

/**
 * Last-chance cleanup when the test process dies: an uncaught exception,
 * `process.exit()`, SIGINT or SIGTERM (signal-exit re-raises the signal after
 * the handlers ran, so the exit status is unchanged). Handlers must be
 * synchronous; they run in reverse registration order and each runs once.
 */
type Cleanup = () => void;

const handlers = new Set<Cleanup>();
let removeHook: (() => void) | undefined;

/** Run `fn` if the process exits before the returned function is called. */
export function onProcessExit(fn: Cleanup): () => void {
  handlers.add(fn);
  if (!removeHook) removeHook = onExit(runAll);
  return () => {
    handlers.delete(fn);
    if (handlers.size === 0 && removeHook) {
      removeHook();
      removeHook = undefined;
    }
  };
}

function runAll(): void {
  const pending = [...handlers].reverse();
  handlers.clear();
  for (const fn of pending) {
    try {
      fn();
    } catch {
      // Exiting: one failed cleanup must not stop the others.
    }
  }
}

import { onExit } from 'signal-exit';
import { watchFromOutside } from './leftovers/watcher.js';
import { envIsSandboxed } from './sandboxed-env.js';

/**
 * Last-chance cleanup when the test process dies: an uncaught exception,
 * `process.exit()`, SIGINT or SIGTERM (signal-exit re-raises the signal after
 * the handlers ran, so the exit status is unchanged). Handlers must be
 * synchronous; they run in reverse registration order and each runs once.
 */
type Cleanup = () => void;

const handlers = new Set<Cleanup>();
let removeHook: (() => void) | undefined;

let watched = false;

/**
 * Run `fn` if the process exits before the returned function is called.
 * Where this code has its own `process` object whose exit never fires
 * (jest), a watcher process sweeps what is left once this one is gone.
 */
export function onProcessExit(fn: Cleanup): () => void {
  handlers.add(fn);
  if (!watched) {
    watched = true;
    if (envIsSandboxed()) watchFromOutside();
  }
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

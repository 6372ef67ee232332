/** What `waitForMatch` watches. */
export interface MatchWatch {
  /** The match now, if there is one. */
  look(): RegExpExecArray | null;
  /** Call `check` whenever there may be a new match; returns the unsubscribe. */
  subscribe(check: () => void): () => void;
  timeoutMs: number;
  /** The error when `timeoutMs` passes first. */
  timeoutError(): Error;
  /** Resolves when no more can come (the process ended and its output was read). */
  ended: () => Promise<void>;
  /** The error when it ended without a match. */
  endedError(): Error;
}

/**
 * Resolve with the first match, looked for now and on each `subscribe`
 * call; reject with `timeoutError()` after `timeoutMs`, or with
 * `endedError()` when `ended()` resolves and a last look finds none. The
 * shared core of `waitForOutput()` (the text windows) and `waitForScreen()`
 * (the rendered screen).
 */
export function waitForMatch(watch: MatchWatch): Promise<RegExpExecArray> {
  const found = watch.look();
  if (found) return Promise.resolve(found);
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (error?: Error, match?: RegExpExecArray) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      unsubscribe();
      if (error) reject(error);
      else resolve(match as RegExpExecArray);
    };
    const check = () => {
      const match = watch.look();
      if (match) finish(undefined, match);
    };
    const timer = setTimeout(() => finish(watch.timeoutError()), watch.timeoutMs);
    const unsubscribe = watch.subscribe(check);
    watch.ended().then(() => {
      if (done) return;
      const match = watch.look();
      if (match) return finish(undefined, match);
      finish(watch.endedError());
    });
  });
}

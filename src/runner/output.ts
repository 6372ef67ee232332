import { writeSync } from 'node:fs';
import { errnoCode } from '../queue/errors.js';
import { sleepSync } from '../queue/sleep.js';

/** A non-blocking output stayed full past the call's deadline: nobody read it. */
export class OutputStalled extends Error {
  /** Told apart by this, not by class: the hot and cold halves each bundle their own copy. */
  readonly stalled = true;
  constructor() {
    super('output not read before the deadline');
  }
}

export function isOutputStalled(error: unknown): boolean {
  return (error as { stalled?: unknown } | undefined)?.stalled === true;
}

/**
 * Write all of `data` to `fd` before returning. Synchronous writes go straight
 * to the pipe, so exiting afterwards loses nothing (a `console.log` followed by
 * `process.exit` truncates large output). A non-blocking pipe that is full
 * (EAGAIN) is retried until `deadline` (then `OutputStalled`). A reader that
 * went away (EPIPE) ends the write and returns false: a call's output then
 * ends the call by SIGPIPE (see `finishCall`), as it ends a real command; a
 * diagnostic is dropped. A closed fd (EBADF) is written to nothing, as Node
 * does. Other errors (a full disk behind a redirect) are thrown.
 */
export function writeAll(
  fd: number,
  data: Uint8Array,
  deadline = Number.POSITIVE_INFINITY,
): boolean {
  let offset = 0;
  let backoff = 1;
  while (offset < data.length) {
    try {
      offset += writeSync(fd, data, offset, data.length - offset);
      backoff = 1;
    } catch (error) {
      const code = errnoCode(error);
      if (code === 'EAGAIN') {
        if (Date.now() >= deadline) throw new OutputStalled();
        sleepSync(backoff);
        backoff = Math.min(backoff * 2, 16);
        continue;
      }
      if (code === 'EPIPE') return false;
      if (code === 'EBADF') return true;
      throw error;
    }
  }
  return true;
}

import { writeSync } from 'node:fs';
import { errnoCode } from '../queue/errors.js';
import { sleepSync } from '../queue/sleep.js';

/**
 * Write all of `data` to `fd` before returning. Synchronous writes go straight
 * to the pipe, so exiting afterwards loses nothing (a `console.log` followed by
 * `process.exit` truncates large output). A non-blocking pipe that is full
 * (EAGAIN) is retried; a reader that went away (EPIPE) ends the write quietly.
 */
export function writeAll(fd: number, data: Uint8Array): void {
  let offset = 0;
  let backoff = 1;
  while (offset < data.length) {
    try {
      offset += writeSync(fd, data, offset, data.length - offset);
      backoff = 1;
    } catch (error) {
      const code = errnoCode(error);
      if (code === 'EAGAIN') {
        sleepSync(backoff);
        backoff = Math.min(backoff * 2, 16);
        continue;
      }
      if (code === 'EPIPE' || code === 'EBADF') return;
      throw error;
    }
  }
}

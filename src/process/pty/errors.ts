import { ShimkitError } from '../../internal/errors.js';

/** A terminal method (`type()`, `press()`, `screen()` …) was called on a process spawned without `pty`. */
export class NotATerminalError extends ShimkitError {
  constructor(message: string) {
    super('ERR_SHIMKIT_NOT_A_TERMINAL', message);
  }
}

/** No pseudo-terminal (or no screen model) can run here; the message says what to install. */
export class PtyUnavailableError extends ShimkitError {
  constructor(message: string) {
    super('ERR_SHIMKIT_PTY_UNAVAILABLE', message);
  }
}

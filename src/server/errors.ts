import { ShimkitError } from '../internal/errors.js';

/** `createMockServer()` could not listen where it was asked to: the message says why and what to do. */
export class MockServerListenError extends ShimkitError {
  /** The listen address, as a socket path or `host:port`. */
  readonly address: string;
  /** The errno code, such as `EADDRINUSE` or `EACCES`. */
  readonly errno: string | undefined;

  constructor(message: string, address: string, errno: string | undefined) {
    super('ERR_SHIMKIT_SERVER_LISTEN', message);
    this.address = address;
    this.errno = errno;
  }
}

/**
 * The mock server's worker thread died (its error is the `cause`). It never
 * throws into the test from a callback: it is kept and thrown from the next
 * call on the server; `dispose()` still cleans up.
 */
export class ServerWorkerError extends ShimkitError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_SHIMKIT_SERVER_WORKER', message, options);
  }
}

/**
 * A playbook (SPEC PB) was not played as scripted: actions left
 * ("Playbook not fully consumed …"), a request after the last one
 * ("Playbook exhausted …"), a request that broke a turn's rule, or a
 * `.then()` or late-bound params function that failed. The message lists
 * each, with the requests they concern.
 */
export class PlaybookError extends ShimkitError {
  constructor(message: string) {
    super('ERR_SHIMKIT_PLAYBOOK', message);
  }
}

/**
 * The shimkit error hierarchy. Every error has a stable `code` (match on it,
 * not on the message) and keeps its `cause`.
 */
export class ShimkitError extends Error {
  /** Stable machine-readable code, e.g. `ERR_SHIMKIT_INVALID_OPTION`. */
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** An option or argument was invalid. Thrown when it is given, not when it is first used. */
export class InvalidOptionError extends ShimkitError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_SHIMKIT_INVALID_OPTION', message, options);
  }
}

/** A scripted response passed to `enqueue()` was invalid (unknown key, wrong type, out of range). */
export class InvalidResponseError extends ShimkitError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_SHIMKIT_INVALID_RESPONSE', message, options);
  }
}

/** `assertDone()` found scripted responses that were never used, or calls that had no response. */
export class UnusedResponsesError extends ShimkitError {
  constructor(message: string) {
    super('ERR_SHIMKIT_UNUSED_RESPONSES', message);
  }
}

/** A call assertion failed (`nthCall()`, `assertNthCall()`): the message shows expected and recorded argv. */
export class CallAssertionError extends ShimkitError {
  constructor(message: string) {
    super('ERR_SHIMKIT_CALL_ASSERTION', message);
  }
}

/**
 * What was asked cannot work in this environment, though nothing passed was
 * wrong: `install()` under jest, whose test files each get their own copy of
 * `process.env` that the programs a test starts never see; `env()` of a mock
 * server on a Unix socket, which no SDK reaches through a base URL. The
 * message says what to do instead.
 */
export class UnsupportedHereError extends ShimkitError {
  constructor(message: string) {
    super('ERR_SHIMKIT_UNSUPPORTED_HERE', message);
  }
}

/** A `waitFor…` deadline passed before the condition held. */
export class WaitTimeoutError extends ShimkitError {
  constructor(message: string) {
    super('ERR_SHIMKIT_WAIT_TIMEOUT', message);
  }
}

/** The object was used after `dispose()` (or `close()`), or was disposed while a wait on it was pending. */
export class DisposedError extends ShimkitError {
  /** `what` names the object; `how` (default: "was already disposed; …") says what happened to it. */
  constructor(what: string, how = 'was already disposed; create a new one for this test.') {
    super('ERR_SHIMKIT_DISPOSED', `${what} ${how}`);
  }
}

/** The package is not built: the shim runner or a shim template is missing. */
export class NotBuiltError extends ShimkitError {
  constructor(missing: string) {
    super(
      'ERR_SHIMKIT_NOT_BUILT',
      `shimkit cannot find ${missing}. If you are working on shimkit itself, run \`npm run build\` first.`,
    );
  }
}

import { dirname } from 'node:path';
import { ShimkitError } from '../internal/errors.js';

/**
 * A mock's state dir is missing, unreadable or malformed. The runner turns it
 * into a one-line diagnostic and the `broken` exit code, never a default
 * response; in the test process it is thrown as is. The message ends with the
 * file it concerns.
 */
export class ProtocolError extends ShimkitError {
  /** The state file or dir that is missing, unreadable or malformed. */
  readonly file: string;

  constructor(reason: string, file: string, options?: { cause?: unknown }) {
    super('ERR_SHIMKIT_PROTOCOL', `${reason.replace(/\.$/, '')}: ${file}`, options);
    this.file = file;
  }
}

/**
 * A mock's state could not be written: the disk is full, a path is too long,
 * permission was denied. `file` names what was being written; the message
 * says what to do.
 */
export class StateWriteError extends ShimkitError {
  /** The file or dir that could not be written. */
  readonly file: string;
  /** The errno code, such as `ENOSPC`. */
  readonly errno: string | undefined;

  constructor(message: string, file: string, errno: string | undefined, cause: unknown) {
    super('ERR_SHIMKIT_STATE_WRITE', message, { cause });
    this.file = file;
    this.errno = errno;
  }
}

/**
 * Whether `error` is a shimkit error, by its code rather than `instanceof`:
 * the runner's hot and cold halves are separate bundles with a copy of the
 * classes each, and an error made by one must be recognised by the other.
 */
export function isShimkitError(error: unknown): error is ShimkitError {
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && typeof code === 'string' && code.startsWith('ERR_SHIMKIT_');
}

export function errnoCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error
    ? String((error as { code: unknown }).code)
    : undefined;
}

/** A call's files vanished under it: the one message for every such race in the runner. */
export const VANISHED =
  'a state file is missing (was the mock disposed or reset while this call ran?)';
/** The same, met by the test process (its own mock object is still live). */
const VANISHED_HERE = 'a state file is missing (was it deleted from outside shimkit?)';

/**
 * Turn a file-system error met while reading or writing `file` of a mock's
 * state into a `ShimkitError` that says what happened and what to do next.
 * `side` says who met it: a call (the runner) or the test process. Errors
 * that already are `ShimkitError`s pass through.
 */
export function stateError(error: unknown, file: string, side: 'call' | 'test'): ShimkitError {
  if (isShimkitError(error)) return error;
  const code = errnoCode(error);
  if (code === 'ENOENT') {
    return new ProtocolError(side === 'call' ? VANISHED : VANISHED_HERE, file, { cause: error });
  }
  const dir = dirname(file);
  const why =
    code === 'ENOSPC' || code === 'EDQUOT'
      ? `the disk holding ${dir} is full (${code}); free some space, or put mocks elsewhere with the tmpDir option`
      : code === 'ENAMETOOLONG'
        ? `the path is too long (${code}); use a shorter tmpDir or mock name`
        : code === 'EACCES' || code === 'EPERM' || code === 'EROFS'
          ? `${dir} is not writable (${code})`
          : code === 'EMFILE' || code === 'ENFILE'
            ? `too many open files (${code})`
            : error instanceof Error
              ? error.message
              : String(error);
  return new StateWriteError(`could not write ${file}: ${why}`, file, code, error);
}

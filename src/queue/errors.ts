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

export function errnoCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error
    ? String((error as { code: unknown }).code)
    : undefined;
}

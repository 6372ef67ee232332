import { ShimkitError } from '../internal/errors.js';

/**
 * `verifyPackedInstall()` could not do its work, for a reason outside the
 * package it checks: npm cannot be found, it was called again from inside
 * the `npm pack` it runs, or a dir it needs cannot be written. A package
 * that fails a check is reported, not thrown.
 */
export class PackedInstallError extends ShimkitError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_SHIMKIT_PACKED_INSTALL', message, options);
  }
}

import { fchmodSync } from 'node:fs';
import type { Claim } from '../queue/claim.js';
import { stateError } from '../queue/errors.js';
import { callPath } from '../queue/layout.js';
import { RECORD_UNFINISHED_MODE } from '../queue/types.js';

/**
 * The call's last record line could not be written (a full disk): mark the
 * record file so readers report the call as failed rather than killed (a
 * chmod needs no space), and say why, for the call's one-line diagnostic.
 */
export function recordFailed(claim: Claim, error: unknown): string {
  try {
    fchmodSync(claim.fd, RECORD_UNFINISHED_MODE);
  } catch {
    // Readers will report the call as killed.
  }
  const { seq } = claim.record;
  const why = stateError(error, callPath(claim.genDir, seq), 'call').message;
  return `mock "${claim.config.name}" call #${seq} could not record how it ended: ${why}`;
}

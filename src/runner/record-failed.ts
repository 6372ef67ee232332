import { fchmodSync } from 'node:fs';
import { writeBytes } from '../queue/atomic.js';
import type { Claim } from '../queue/claim.js';
import { stateError } from '../queue/errors.js';
import { MockExitCode } from '../queue/exit-codes.js';
import { callPath } from '../queue/layout.js';
import { recordLine } from '../queue/records.js';
import { RECORD_UNFINISHED_MODE } from '../queue/types.js';

/**
 * The call's last record line could not be written (a full disk): mark the
 * record file so readers report the call as failed rather than killed (a
 * chmod needs no space), and say why, for the call's one-line diagnostic.
 */
export function recordFailed(claim: Claim, error: unknown): string {
  markUnfinished(claim.fd);
  const { seq } = claim.record;
  const why = stateError(error, callPath(claim.genDir, seq), 'call').message;
  return `mock "${claim.config.name}" call #${seq} could not record how it ended: ${why}`;
}

/**
 * End a record whose call failed before it claimed anything: its last line
 * says failed, with the diagnostic; if even that cannot be written, the mark.
 */
export function endRecord(fd: number, diagnostic: string): void {
  const end = {
    status: 'failed' as const,
    exitCode: MockExitCode.broken,
    endedAt: Date.now(),
    diagnostic,
  };
  try {
    writeBytes(fd, Buffer.from(recordLine(end)));
  } catch {
    markUnfinished(fd);
  }
}

function markUnfinished(fd: number): void {
  try {
    fchmodSync(fd, RECORD_UNFINISHED_MODE);
  } catch {
    // Readers will report the call as killed.
  }
}

import { publishExclusive, writeFileAtomic } from './atomic.js';
import { callPath } from './layout.js';
import type { WireCallRecord } from './types.js';

/**
 * Publish a new call record at the first free number from `from` on.
 * Exclusive creation means two callers never share a number.
 */
export function publishCallRecord(
  genDir: string,
  from: number,
  fields: Omit<WireCallRecord, 'seq'>,
): WireCallRecord {
  for (let seq = from; ; seq++) {
    const record = { seq, ...fields };
    if (publishExclusive(callPath(genDir, seq), serialise(record))) return record;
  }
}

/** Rewrite a call record as it progresses (atomic replace). */
export function updateCallRecord(genDir: string, record: WireCallRecord): void {
  writeFileAtomic(callPath(genDir, record.seq), serialise(record));
}

function serialise(record: WireCallRecord): string {
  return `${JSON.stringify(record)}\n`;
}

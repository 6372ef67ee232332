import { publishExclusive, writeFileAtomic } from './atomic.js';
import { callPath } from './layout.js';
import type { WireCallRecord } from './types.js';

/**
 * Publish a new call record at the first free number from `from` on and
 * return that number. Exclusive creation means two callers never share one.
 */
export function publishCallRecord(
  genDir: string,
  from: number,
  record: Omit<WireCallRecord, 'seq'>,
): number {
  for (let seq = from; ; seq++) {
    if (publishExclusive(callPath(genDir, seq), serialise({ seq, ...record }))) return seq;
  }
}

/** Rewrite a call record as it progresses (atomic replace). */
export function updateCallRecord(genDir: string, record: WireCallRecord): void {
  writeFileAtomic(callPath(genDir, record.seq), serialise(record));
}

function serialise(record: WireCallRecord): string {
  return `${JSON.stringify(record)}\n`;
}

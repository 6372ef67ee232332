import { ProtocolError } from './errors.js';
import { completeLines } from './lines.js';
import type { WireCallRecord } from './types.js';

/**
 * A call record is a small JSONL file, `calls/<seq>.json`, written by its call
 * alone: the first line when the call starts (argv, cwd, pid …), a second
 * when it has claimed a response (source, response), a third when it ends
 * (status, exit code). Lines are appended through the fd that created the
 * file, so a call costs one new file; a reader merges the complete lines,
 * later ones winning, and never sees a part of a line.
 *
 * The file is created under a temp name and hard-linked into place, so it is
 * never visible empty; the claim marker `claims/<n>` is another hard link of
 * the same file, so it carries the claiming call's `id`.
 */

/** One line of a record: a JSON object and its newline. */
export function recordLine(fields: Partial<WireCallRecord>): string {
  return `${JSON.stringify(fields)}\n`;
}

/** Merge the complete lines of a record file; `undefined` while not even the first line is complete. */
export function parseRecordText(
  text: string,
  seq: number,
  file: string,
): WireCallRecord | undefined {
  const lines = completeLines(text);
  if (lines.length === 0) return undefined;
  const record: Record<string, unknown> = {};
  for (const line of lines) {
    for (const [key, value] of Object.entries(parseLine(line, file))) {
      if (key !== '__proto__') record[key] = value;
    }
  }
  record.seq = seq;
  const { argv, id, pid, status } = record;
  if (
    !Array.isArray(argv) ||
    !argv.every((a) => typeof a === 'string') ||
    typeof id !== 'string' ||
    !Number.isInteger(pid) ||
    typeof status !== 'string'
  ) {
    throw new ProtocolError('a call record is malformed (no argv, id, pid or status)', file);
  }
  return record as unknown as WireCallRecord;
}

/** The `id` on a record's (or claim marker's) first line. */
export function recordId(text: string, file: string): string | undefined {
  const end = text.indexOf('\n');
  if (end === -1) return undefined;
  const id = parseLine(text.slice(0, end), file).id;
  return typeof id === 'string' ? id : undefined;
}

function parseLine(line: string, file: string): Partial<WireCallRecord> {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    value = undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ProtocolError('a line of a call record is not a JSON object', file);
  }
  return value as Partial<WireCallRecord>;
}

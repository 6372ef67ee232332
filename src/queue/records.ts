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
 *
 * A call the sh shim serves (shims/posix-fast.sh) writes what a shell can:
 * its first line has `"sh":1` and counts, then come raw NUL-terminated items
 * (the cwd as `pwd -P` prints it, each argument's bytes, each `recordEnv`
 * key as `KEY=value`, or `KEY` when unset), then JSON lines as above. The
 * file is created in place (exclusively), so a reader may meet it part-way
 * written: it counts once all its items are there. Its `id` comes from its
 * call number (`seq` on its first line), `startedAt` is the file's birth
 * time (or, where the file system keeps none, its modification time), and
 * `endedAt` its modification time once the last line is there. The shim's
 * claim markers are files of their own, holding `{"seq":<n>}`.
 */

/** One line of a record: a JSON object and its newline. */
export function recordLine(fields: Partial<WireCallRecord>): string {
  return `${JSON.stringify(fields)}\n`;
}

/** How a record file's times and inode are read (lazily: only records the sh shim wrote need them). */
export type RecordStat = () => { birthtimeMs: number; mtimeMs: number } | undefined;

/** The times of a record file from its (bigint) stat. */
export function recordTimes(stat: { birthtimeNs: bigint; mtimeNs: bigint }) {
  return {
    birthtimeMs: Number(stat.birthtimeNs / 1000n) / 1000,
    mtimeMs: Number(stat.mtimeNs / 1000n) / 1000,
  };
}

const SH_HEADER = Buffer.from('{"sh":1,');

/** Whether a record (or claim marker) was written by the sh shim. */
export function isShRecord(bytes: Uint8Array): boolean {
  return bytes.length >= SH_HEADER.length && SH_HEADER.every((b, i) => bytes[i] === b);
}

/** A record file of either kind, merged; `undefined` while it is not complete enough to read. */
export function parseRecord(
  bytes: Buffer,
  seq: number,
  file: string,
  stat: RecordStat,
): WireCallRecord | undefined {
  if (!isShRecord(bytes)) return parseRecordText(bytes.toString('utf8'), seq, file);
  const sh = shRecordParts(bytes, file);
  if (!sh) return undefined;
  const times = stat();
  if (!times) return undefined; // gone (a reset) between the read and the stat
  const record = parseRecordText(sh.head + sh.tail, seq, file) as unknown as Record<
    string,
    unknown
  >;
  const { pid } = record;
  record.id = shRecordId(pid, seq);
  record.cwd = sh.cwd;
  record.argv = sh.argv;
  if (sh.argv.some((a) => a.includes('\uFFFD'))) record.argvBase64 = sh.rawArgv;
  if (sh.env) record.env = sh.env;
  record.startedAt = Math.round(times.birthtimeMs || times.mtimeMs);
  if (record.status !== 'running') record.endedAt ??= Math.round(times.mtimeMs);
  for (const key of ['sh', 'argc', 'envc']) delete record[key];
  record.seq = seq;
  return record as unknown as WireCallRecord;
}

/** The parts of an sh record: its first line (with `argv` added, for the checks), the raw items, the JSON lines after. */
function shRecordParts(bytes: Buffer, file: string) {
  const end = bytes.indexOf(0x0a);
  if (end === -1) return undefined;
  const head = parseLine(bytes.subarray(0, end).toString('utf8'), file) as Record<string, unknown>;
  const { argc, envc } = head;
  if (!Number.isInteger(argc) || (envc !== undefined && !Number.isInteger(envc))) {
    throw new ProtocolError('a call record of the sh shim is malformed (no argc)', file);
  }
  const items: Buffer[] = [];
  let at = end + 1;
  for (let i = 0; i < 1 + (argc as number) + ((envc as number | undefined) ?? 0); i++) {
    const nul = bytes.indexOf(0, at);
    if (nul === -1) return undefined; // still being written
    items.push(bytes.subarray(at, nul));
    at = nul + 1;
  }
  const [cwdItem = Buffer.alloc(0), ...rest] = items;
  const raw = rest.slice(0, argc as number);
  const argv = raw.map((b) => b.toString('utf8'));
  let env: Record<string, string> | undefined;
  if (envc !== undefined) {
    env = {};
    for (const item of rest.slice(argc as number)) {
      const text = item.toString('utf8');
      const eq = text.indexOf('=');
      if (eq !== -1) env[text.slice(0, eq)] = text.slice(eq + 1);
    }
  }
  // `pwd -P` ends the path with a newline.
  const cwdBytes = cwdItem.at(-1) === 0x0a ? cwdItem.subarray(0, -1) : cwdItem;
  return {
    head: `${JSON.stringify({ ...head, argv, id: '' })}\n`,
    tail: bytes.subarray(at).toString('utf8'),
    cwd: cwdBytes.toString('utf8'),
    argv,
    rawArgv: raw.map((b) => b.toString('base64')),
    env,
  };
}

/** The id of the record the sh shim wrote as call `seq`: unique in its generation, as call numbers are. */
const shRecordId = (pid: unknown, seq: number) => `${String(pid)}-sh${seq}`;

/**
 * Whose claim a claim marker is: the `id` of the record it is a link of (the
 * runner links its record; a record of the sh shim the runner resumed names
 * its `seq`), or `seq:<n>` for a marker the sh shim created, which holds
 * `{"seq":<n>}`; undefined while it is empty (created, not yet written).
 */
export function claimOwner(bytes: Buffer, file: string): string | undefined {
  const end = bytes.indexOf(0x0a);
  if (end === -1) return undefined;
  const first = parseLine(bytes.subarray(0, end).toString('utf8'), file) as Record<string, unknown>;
  if (isShRecord(bytes)) return shRecordId(first.pid, first.seq as number);
  if (typeof first.id === 'string') return first.id;
  return Number.isSafeInteger(first.seq) ? `seq:${String(first.seq)}` : undefined;
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

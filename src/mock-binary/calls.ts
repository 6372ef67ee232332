import { MockExitCode } from '../queue/exit-codes.js';
import { outDir } from '../queue/layout.js';
import type { Snapshot, SnapshotRecord } from '../queue/reader.js';
import { formatCalls, summariseResponse } from './diagnostics.js';
import type { MockCall } from './types.js';

/** The public view of the recorded calls in a snapshot. */
export function callsOf(snapshot: Snapshot): MockCall[] {
  return snapshot.calls.map((record) => toMockCall(record, snapshot.claims));
}

function toMockCall(record: SnapshotRecord, claims: Map<number, number[]>): MockCall {
  // A call that died before it could finish its record is still "running" on
  // disk: killed, or (marked so) unable to write its last line.
  const ended = record.ended === true;
  const unrecorded = ended && record.unfinished === true;
  // A call says what it claimed only after its claim marker exists.
  const claimed =
    record.source !== 'queue' ||
    claims.get(record.response as number)?.includes(record.seq) === true;
  const stdinBytes = () =>
    record.stdinBase64 === undefined ? undefined : Buffer.from(record.stdinBase64, 'base64');
  // Records are cached between calls(), so nothing of them is handed out to be
  // mutated; the byte views are made when first read (most tests never do).
  return {
    index: record.seq,
    argv: [...record.argv],
    get argvBytes() {
      return record.argvBase64
        ? record.argvBase64.map((b) => Buffer.from(b, 'base64'))
        : record.argv.map((a) => Buffer.from(a));
    },
    cwd: record.cwd,
    pid: record.pid,
    ppid: record.ppid,
    startedAt: record.startedAt,
    endedAt: record.endedAt,
    claimMs: record.claimMs,
    status: unrecorded ? 'failed' : ended ? 'killed' : record.status,
    signal: record.signal as NodeJS.Signals | undefined,
    response: claimed ? record.response : undefined,
    responseSource: claimed ? record.source : undefined,
    exitCode: unrecorded ? MockExitCode.broken : record.exitCode,
    diagnostic: unrecorded
      ? `call #${record.seq} could not record how it ended (is the disk full?); it exited with code ${MockExitCode.broken}`
      : record.diagnostic,
    env: record.env === undefined ? undefined : { ...record.env },
    get stdin() {
      return stdinBytes()?.toString('utf8');
    },
    get stdinBytes() {
      return stdinBytes();
    },
    stdinTruncated: record.stdinTruncated === true,
    stdinOpen: record.stdinOpen === true,
    proxy: record.proxy,
  };
}

/**
 * Why the mock is not done, or undefined if every queued response was used
 * and no call went without a response:
 *   mock "git": 1 of 3 responses used; never used: #2 {stdout:"main"}, #3 {exitCode:1}
 */
export function notDoneReport(name: string, snapshot: Snapshot): string | undefined {
  const calls = callsOf(snapshot);
  const total = snapshot.queue.length;
  const unused: string[] = [];
  const partly: string[] = [];
  let used = 0;
  snapshot.queue.forEach((line, i) => {
    const n = i + 1;
    const { times, optional } = cardinality(line);
    const count = snapshot.claims.get(n)?.length ?? 0;
    const wanted = times === 'always' ? 1 : (times ?? 1);
    if (count > 0) used += 1;
    if (count >= wanted || optional) return;
    const summary = summariseResponse(line, outDir(snapshot.genDir));
    if (count === 0) unused.push(`#${n} ${summary}`);
    else partly.push(`#${n} ${summary} (${count} of ${wanted} times)`);
  });
  const unmatched = calls.filter((c) => c.status === 'unmatched');
  if (unused.length === 0 && partly.length === 0 && unmatched.length === 0) return undefined;

  const parts = [`${used} of ${total} responses used`];
  if (unused.length > 0) parts.push(`never used: ${unused.join(', ')}`);
  if (partly.length > 0) parts.push(`used too few times: ${partly.join(', ')}`);
  if (unmatched.length > 0) {
    const which = unmatched.map((c) => `#${c.index}`).join(', ');
    parts.push(
      `${unmatched.length} call${unmatched.length === 1 ? '' : 's'} had no response (${which})`,
    );
  }
  return `mock "${name}": ${parts.join('; ')}\n${formatCalls(name, calls)}`;
}

/** `times` and `optional` of a queue line (lines without them are not parsed). */
function cardinality(line: string): { times?: number | 'always'; optional?: boolean } {
  if (!line.includes('"times"') && !line.includes('"optional"')) return {};
  try {
    const value = JSON.parse(line) as { times?: number | 'always'; optional?: boolean };
    return { times: value.times, optional: value.optional === true };
  } catch {
    return {};
  }
}

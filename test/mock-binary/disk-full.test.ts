import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MockExitCode } from '../../src/index.js';
import { firstJsonLine, privateMountArgs, spawnTracked, testDir } from '../helpers/index.js';

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}
interface Thrown {
  name: string;
  code: string;
  message: string;
}
/** What test/fixtures/disk-full.mjs reports. */
interface DiskFullReport {
  call: Outcome;
  callsAfterFullCall: number;
  litterAfterCall: string[];
  queuedBefore: number;
  enqueue: Thrown;
  enqueueSmall: Thrown;
  enqueueTiny: Thrown | null;
  stateShAfterTiny: boolean;
  afterTiny: string[];
  afterTinySh: boolean[];
  queuedAfter: number;
  litterAfterEnqueue: string[];
  create: Thrown;
  reset: Thrown;
  litterAfterReset: string[];
  resetWithRoom: Thrown | null;
  callAfterReset: Outcome;
  entriesAfterCreate: number;
  lastLine: Outcome;
  lastLineCall: { status: string; exitCode: number }[];
  litterAfterLastLine: string[];
}

const FIXTURE = fileURLToPath(new URL('../fixtures/disk-full.mjs', import.meta.url));

/**
 * A full disk, for real: a 1 MiB tmpfs in a private mount namespace (so it
 * vanishes with the fixture), as root or through a user namespace.
 */
const mountNamespace = privateMountArgs();
if (mountNamespace === undefined) {
  console.warn(
    'SKIPPED disk-full tests: `unshare -m` with a tmpfs mount needs root or user namespaces (CI runs them as root).',
  );
}

describe.skipIf(mountNamespace === undefined)('a full disk', () => {
  it('MB-20 calls, enqueue() and createMockBinary() on a full disk give one-line diagnostics or ShimkitErrors naming the dir, and leave no temp files', async () => {
    const disk = testDir();
    const child = spawnTracked('unshare', [
      ...(mountNamespace as string[]),
      'sh',
      '-c',
      'mount -t tmpfs -o size=1m tmpfs "$1" && exec "$2" "$3" "$1"',
      'sh',
      disk,
      process.execPath,
      FIXTURE,
    ]);
    const report = await firstJsonLine<DiskFullReport>(child);
    const full =
      /the disk holding \/\S+ is full \(ENOSPC\); free some space, or put mocks elsewhere with the tmpDir option/;

    expect(report.call.code).toBe(MockExitCode.broken);
    expect(report.call.stdout).toBe('');
    expect(report.call.stderr).toMatch(
      new RegExp(`^shimkit: could not write \\/\\S+: ${full.source}\\n$`),
    );
    expect(report.callsAfterFullCall).toBe(0);
    expect(report.litterAfterCall).toEqual([]);

    for (const error of [report.enqueue, report.enqueueSmall, report.create, report.reset]) {
      expect(error).toMatchObject({ name: 'StateWriteError', code: 'ERR_SHIMKIT_STATE_WRITE' });
      expect(error.message).toMatch(full);
    }
    expect(report.queuedAfter).toBe(report.queuedBefore);
    // PERF-07: its sh/<n> could not be written, so the sh shim is off for this mock
    // (in the runner-only project it never was on), and the runner serves every response.
    expect(report.enqueueTiny).toBeNull();
    expect(report.stateShAfterTiny).toBe(false);
    expect(report.afterTiny).toEqual(['a\n', 't\n']);
    expect(report.afterTinySh).toEqual([false, false]);
    expect(report.litterAfterEnqueue).toEqual([]);
    expect(report.entriesAfterCreate).toBe(1); // only the first mock's root
    expect(report.litterAfterReset).toEqual([]);
    expect(report.resetWithRoom).toBeNull(); // a failed reset leaves nothing in the way
    expect(report.callAfterReset).toMatchObject({ code: 0, stdout: '' });

    // Only the last record line failed: the call says so instead of exiting 0 unrecorded.
    expect(report.lastLine.code).toBe(MockExitCode.broken);
    expect(report.lastLine.stderr).toMatch(
      new RegExp(
        `^shimkit: mock "cat" call #1 could not record how it ended: could not write \\/\\S+: ${full.source}\\n$`,
      ),
    );
    expect(report.lastLineCall).toEqual([{ status: 'failed', exitCode: MockExitCode.broken }]);
    expect(report.litterAfterLastLine).toEqual([]);
  });
});

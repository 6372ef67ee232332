// What a hostile review of the `shimkit` command found, each through the built command.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { privateMountArgs, runCommand, testDir } from '../helpers/index.js';
import { CLI, expectConcurrentMocksBothKept, queueLines, shimkit, shimkitOk } from './helpers.js';

describe('CLI-01 the shimkit command at the edges', () => {
  it('CLI-01 -h as the value of a flag is that value, not a call for help; repeats and prototype names are refused', async () => {
    const d = join(testDir(), 'mocks');
    await shimkitOk(['mock', 'git', '--dir', d]);
    await shimkitOk(['enqueue', d, 'git', '--stdout', '-h']);
    expect(queueLines(d, 'git')).toEqual([{ stdout: '-h' }]);
    const twice = await shimkit(['enqueue', d, 'git', '--stdout', 'a', '--stdout', 'b']);
    expect(twice.code).toBe(2);
    expect(twice.stderr.toString()).toContain(
      '--stdout was given twice ("a" and "b"); give it once.',
    );
    for (const flag of ['--constructor', '--__proto__', '--toString=1']) {
      const r = await shimkit(['enqueue', d, 'git', flag, 'x']);
      expect(r.code, flag).toBe(2);
      expect(r.stderr.toString(), flag).toContain('unknown flag');
    }
    expect(queueLines(d, 'git')).toHaveLength(1);
  });

  it('CLI-01 bytes that are not UTF-8 in --stdout are refused, pointing to --stdout-base64', async () => {
    const d = join(testDir(), 'mocks');
    await shimkitOk(['mock', 'git', '--dir', d]);
    const r = await runCommand('sh', [
      '-c',
      `"${process.execPath}" "${CLI}" enqueue "${d}" git --stdout "$(printf '\\377\\376')"`,
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr.toString()).toContain(
      '--stdout holds bytes that are not UTF-8 (they would be served as U+FFFD). Pass them with --stdout-base64',
    );
  });

  it('CLI-01 a mock named .foo is verified with the others; calls | head -1 ends quietly', async () => {
    const d = join(testDir(), 'mocks');
    await shimkitOk(['mock', '.foo', 'git', '--dir', d]);
    await shimkitOk(['enqueue', d, '.foo', '--stdout', 'x']);
    const verify = await shimkit(['verify', d]);
    expect(verify.code).toBe(1);
    expect(verify.stderr.toString()).toContain('mock ".foo"');
    await shimkitOk(['enqueue', d, 'git', '--stdout', 'out']); // repeated for every later call
    // 70 calls with a 2 KiB argument: more lines than a pipe holds (64 KiB), so
    // `calls` meets the closed pipe.
    const arg = 'x'.repeat(2048);
    const calls = await runCommand('bash', [
      '-c',
      `PATH="${d}/bin:$PATH"; for i in $(seq 70); do git ${arg} >/dev/null; done; "${process.execPath}" "${CLI}" calls "${d}" git | head -1; echo "status=\${PIPESTATUS[0]}" >&2`,
    ]);
    expect(calls.stdout.toString()).toBe(`#1 git ${arg} -> exit 0 (response #1)\n`);
    expect(calls.stderr.toString()).not.toContain('EPIPE');
    expect(calls.stderr.toString()).toBe('status=0\n');
  });

  // 16 rounds of it are in edges.stress.test.ts.
  it('CLI-01 two shimkit mock at once on one new dir: both mocks are there, neither run deletes the other (2 rounds)', () =>
    expectConcurrentMocksBothKept(2));

  it('CLI-01 shimkit mock on a dir that is not empty and not a mock dir says to pass a new one', async () => {
    const d = testDir();
    mkdirSync(join(d, 'src'));
    writeFileSync(join(d, 'README'), 'mine\n');
    const r = await shimkit(['mock', 'git', '--dir', d]);
    expect(r.code).toBe(3);
    expect(r.stderr.toString()).toContain(
      'exists, is not empty and is not a shimkit mock dir: `shimkit mock` makes one in a dir that does not exist yet or is empty.',
    );
  });
});

const mountNamespace = privateMountArgs();
if (mountNamespace === undefined) {
  console.warn(
    'SKIPPED the CLI full-disk test: `unshare -m` with a tmpfs mount needs root or user namespaces (CI runs as root).',
  );
}

describe.skipIf(mountNamespace === undefined)('CLI-01 the shimkit command on a full disk', () => {
  it('CLI-01 MB-20 enqueue on a full disk exits 3 with the library’s message in the CLI’s words (--dir, not tmpDir)', async () => {
    const disk = testDir();
    const script = [
      'mount -t tmpfs -o size=1m tmpfs "$1" || exit 90',
      '"$2" "$3" mock git --dir "$1/d" >/dev/null || exit 91',
      'head -c 2000000 /dev/zero >"$1/fill" 2>/dev/null',
      'exec "$2" "$3" enqueue "$1/d" git --stdout "$(head -c 100000 /dev/zero | tr "\\0" x)"',
    ].join('\n');
    const r = await runCommand('unshare', [
      ...(mountNamespace as string[]),
      'sh',
      '-c',
      script,
      'sh',
      disk,
      process.execPath,
      CLI,
    ]);
    const stderr = r.stderr.toString();
    expect(r.code, stderr).toBe(3);
    expect(stderr).toMatch(
      /^shimkit enqueue: .* is full \(ENOSPC\); free some space, or give --dir a dir on another disk/,
    );
    expect(stderr).not.toContain('tmpDir');
  });
});

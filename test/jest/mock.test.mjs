// A jest test file, ESM (VT-04), run with --experimental-vm-modules.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createMockBinary, createSandbox, UnsupportedHereError } from '../../dist/index.js';

test('install() says to pass env() instead; env() reaches the program', () => {
  const git = createMockBinary('git', { responses: [{ stdout: 'mocked\n' }] });
  expect(() => git.install()).toThrow(/own copy of process\.env .* Pass the mock's env\(\)/);
  expect(() => git.install()).toThrow(UnsupportedHereError);
  expect(execFileSync('git', ['status'], { env: git.env() }).toString()).toBe('mocked\n');
  git.assertDone();
});

test('what a test forgets to dispose is left for the exit cleanup', () => {
  const git = createMockBinary('git');
  const sb = createSandbox();
  writeFileSync(process.env.SHIMKIT_REPORT, JSON.stringify({ dirs: [git.dir, sb.root] }));
});

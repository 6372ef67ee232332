// A jest test file, CommonJS (VT-04): what a newcomer writes with jest.
const { execFileSync } = require('node:child_process');
const { writeFileSync } = require('node:fs');
const {
  createMockBinary,
  createSandbox,
  spawnProcess,
  UnsupportedHereError,
} = require('../../dist/index.cjs');

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
  const p = spawnProcess('sleep', ['60'], { sandbox: sb }); // never closed: must not keep jest alive
  writeFileSync(
    process.env.SHIMKIT_REPORT,
    JSON.stringify({ dirs: [git.dir, sb.root], pid: p.pid }),
  );
  if (process.env.SHIMKIT_HANG === '1') return new Promise(() => {}); // wait for SIGTERM
});

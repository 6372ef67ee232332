// VT-01: what a failing test with fixture mocks reports, from a vitest of its
// own running test/vitest/fixtures/failing.fixture.ts (a test cannot watch its
// own failure).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCommand, testDir } from '../helpers/index.js';

const VITEST = join(
  createRequire(import.meta.url).resolve('vitest/package.json'),
  '..',
  'vitest.mjs',
);
const CONFIG = fileURLToPath(new URL('./fixtures/vitest.config.ts', import.meta.url));

describe('shimkit/vitest fixtures when the test fails', () => {
  it('VT-01 the report after a failed test says the test failed first, and shows what a hung call printed before run() gave up', async () => {
    const tmp = testDir();
    const report = join(tmp, 'report.json');
    const r = await runCommand(
      process.execPath,
      [VITEST, 'run', '--config', CONFIG, '--reporter=json', `--outputFile=${report}`],
      { env: { ...process.env, TMPDIR: tmp, NO_COLOR: '1' } },
    );
    expect(r.code, r.stderr.toString()).toBe(1);
    const results = JSON.parse(readFileSync(report, 'utf8')).testResults[0].assertionResults as {
      title: string;
      failureMessages: string[];
    }[];
    const failures = (title: string) =>
      results
        .find((a) => a.title.startsWith(title))
        ?.failureMessages.map((m) => m.split('\n    at ')[0]);

    // The assertion first; then, from the fixture, the hung call's own diagnostic:
    // the mock (3 s) gave up before run() (4 s) and the test (5 s).
    const hung = failures('a call that hangs');
    expect(hung?.[0]).toMatch(/^AssertionError: expected 124 to be \+0/);
    expect(hung?.[1]).toBe(
      `ShimkitError: the test failed (its error is reported before this one); calls to its mocks printed:\n  mock "git" call #1 timed out after 3000 ms hanging, as scripted (hang: true); kill it, or raise the mock's timeoutMs.`,
    );
    // The body's own error first; the unused response after it, said to be a consequence.
    const threw = failures('a body that throws');
    expect(threw?.[0]).toBe('ReferenceError: run is not defined');
    expect(threw?.[1]).toMatch(
      /^UnusedResponsesError: the test failed first \(its error is reported before this one\); then disposing its fixtures found: mock "git": 0 of 1 responses used; never used: #1/,
    );
  });
});

import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCommand, testDir } from '../helpers/index.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/forgotten-strict-server.mjs', import.meta.url));
const DIST = pathToFileURL(fileURLToPath(new URL('../../dist/index.js', import.meta.url))).href;
const VITEST = join(
  dirname(createRequire(import.meta.url).resolve('vitest/package.json')),
  'vitest.mjs',
);

/** The env of a runner started by a test: without what this vitest run set for its own workers. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env))
    if (/^(VITEST|TEST$|NODE_OPTIONS$)/.test(name)) delete env[name];
  return env;
}

describe('a strict server forgotten (HT-03, HT-06)', () => {
  it('HT-03 HT-06 a strict server never disposed and not done: the process still exits 0, and at its exit stderr names the server, where it was created, how many scripted uses were not made, what to call, and the report', async () => {
    const out = await runCommand(process.execPath, [FIXTURE, 'forgotten']);
    expect(out.code).toBe(0);
    const [url] = JSON.parse(out.stdout.toString()).urls;
    const err = out.stderr.toString();
    expect(err).toContain(
      `shimkit: warning: the strict mock server ${url}, created at ${pathToFileURL(FIXTURE).href}:12:`,
    );
    expect(err).toContain('was never disposed and 2 scripted uses were never made');
    expect(err).toContain('`await using api = await createMockServer({ strict: true })`');
    expect(err).toContain('`api.assertDone()`');
    expect(err).toContain(
      `mock server ${url}: 1 of 3 scripted uses made; never used: expectation 'plan'`,
    );
    expect(err).toContain('#1 GET /v1/first');
  });

  it('HT-03 HT-06 no warning for a strict server that is done, one disposed, one not strict, or one whose assertDone() already threw its report', async () => {
    for (const mode of ['done', 'asserted']) {
      const out = await runCommand(process.execPath, [FIXTURE, mode]);
      expect(out.code, mode).toBe(0);
      expect(JSON.parse(out.stdout.toString()).urls.length, mode).toBeGreaterThan(0);
      expect(out.stderr.toString(), mode).toBe('');
    }
  });

  it('HT-03 HT-06 under plain vitest (no shimkit fixture) a test that forgets a strict server passes, and the run prints the warning naming the test file', async () => {
    const root = testDir();
    const file = join(root, 'forgets.test.mjs');
    writeFileSync(
      file,
      [
        "import { test } from 'vitest';",
        `import { createMockServer } from ${JSON.stringify(DIST)};`,
        "test('forgets a strict server', async () => {",
        '  const api = await createMockServer({ strict: true });',
        "  api.expect({ path: '/v1/never' }, { text: 'unused' }, { name: 'plan' });",
        '});',
        '',
      ].join('\n'),
    );
    const out = await runCommand(
      process.execPath,
      [VITEST, 'run', '--root', root, '--reporter=dot', '--no-color'],
      { cwd: root, env: cleanEnv() },
    );
    expect(out.code, out.stderr.toString()).toBe(0);
    expect(out.stdout.toString()).toMatch(/1 passed/);
    const err = out.stderr.toString();
    expect(err).toMatch(
      /shimkit: warning: the strict mock server http:\/\/127\.0\.0\.1:\d+, created at .*forgets\.test\.mjs:4:/,
    );
    expect(err).toContain('1 scripted use was never made');
    expect(err).toContain("never used: expectation 'plan'");
  });
});

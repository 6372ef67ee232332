import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { python3, runCommand } from '../helpers/index.js';
import { shimkitOnPath } from './helpers.js';
import { serverTestDir } from './server-helpers.js';

// `shimkit serve` from the other languages' test runners, as their users write
// it: bats (the devDependency), pytest and `go test` on the files in
// test/fixtures/. Their temp dirs are under serverTestDir(), so a server a
// failing file left running is killed when the test ends.

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));
const require = createRequire(import.meta.url);

/** .ci/run installs pytest and Go and sets SHIMKIT_LANGUAGES_REQUIRED=1: there a missing one fails instead. */
const required = process.env.SHIMKIT_LANGUAGES_REQUIRED === '1';
const works = (command: string, args: string[]) =>
  spawnSync(command, args, { stdio: 'ignore' }).status === 0;
function skipped(tool: string, install: string): boolean {
  if (required) return false;
  console.warn(
    `\n*** SKIPPED: ${tool} is not installed, so the HT-10 ${tool} test did not run. Install it (${install}) or run .ci/run as root. ***\n`,
  );
  return true;
}

/** The env of a runner: `shimkit` on PATH and in SHIMKIT, temp dirs under a dir whose servers die with the test. */
function runnerEnv(): NodeJS.ProcessEnv {
  const { dir, env } = shimkitOnPath();
  return { ...env, SHIMKIT: join(dir, 'shimkit'), TMPDIR: serverTestDir() };
}

describe('shimkit serve from bats, pytest and Go (HT-10)', () => {
  it('HT-10 bats: serve --detach in setup, eval of its lines, expect/enqueue, curl, requests, verify, stop in teardown', async () => {
    const bats = join(require.resolve('bats/package.json'), '..', 'bin', 'bats');
    const r = await runCommand(bats, ['--tap', join(FIXTURES, 'serve.bats')], { env: runnerEnv() });
    const out = r.stdout.toString() + r.stderr.toString();
    expect(r.code, out).toBe(0);
    expect(out).toContain('ok 1 a chat completion streams the scripted text');
    expect(out).toContain(
      'ok 2 a 429 with retry-after-ms, and verify fails while a response is unused',
    );
  });

  const python = python3();
  it.skipIf(
    !works(python, ['-m', 'pytest', '--version']) &&
      skipped('pytest', 'apt-get install python3-pytest'),
  )(
    'HT-10 pytest: a fixture serves detached (--json env) and stops; urllib streams sse.chat and gets the 429',
    async () => {
      const r = await runCommand(
        python,
        ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', join(FIXTURES, 'test_serve_cli.py')],
        {
          env: {
            ...runnerEnv(),
            PYTHONDONTWRITEBYTECODE: '1',
            PYTEST_DISABLE_PLUGIN_AUTOLOAD: '1',
          },
        },
      );
      const out = r.stdout.toString() + r.stderr.toString();
      expect(r.code, out).toBe(0);
      expect(out).toMatch(/2 passed/);
    },
  );

  it.skipIf(!works('go', ['version']) && skipped('go', 'apt-get install golang-go'))(
    'HT-10 Go: go test with net/http against serve --detach --json; t.Cleanup stops it',
    async () => {
      const env = runnerEnv();
      const r = await runCommand('go', ['test', '-count=1', '-v', './...'], {
        cwd: join(FIXTURES, 'serve-go'),
        env: {
          ...env,
          GOFLAGS: '-mod=mod',
          GOPROXY: 'off',
          GOTOOLCHAIN: 'local',
          GOCACHE:
            process.env.GOCACHE ??
            join(process.env.HOME ?? (env.TMPDIR as string), '.cache', 'go-build'),
        },
      });
      const out = r.stdout.toString() + r.stderr.toString();
      expect(r.code, out).toBe(0);
      expect(out).toContain('--- PASS: TestServeStreamsChatAndRateLimits');
    },
    180_000, // a cold Go build cache builds net/http first
  );
});

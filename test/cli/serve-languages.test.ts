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
function skipped(tool: string, install: string, tests = 'HT-10'): boolean {
  if (required) return false;
  console.warn(
    `\n*** SKIPPED: ${tool} is not installed, so the ${tests} ${tool} tests did not run. Install it (${install}) or run .ci/run as root. ***\n`,
  );
  return true;
}
const hasPytest = works(python3(), ['-m', 'pytest', '--version']);
const hasGo = works('go', ['version']);

/** The env of a runner: `shimkit` on PATH and in SHIMKIT, temp dirs under a dir whose servers die with the test. */
function runnerEnv(): NodeJS.ProcessEnv {
  const { dir, env } = shimkitOnPath();
  return { ...env, SHIMKIT: join(dir, 'shimkit'), TMPDIR: serverTestDir() };
}

/** bats --tap on a fixture file. */
function bats(file: string) {
  const command = join(require.resolve('bats/package.json'), '..', 'bin', 'bats');
  return runCommand(command, ['--tap', join(FIXTURES, file)], { env: runnerEnv() });
}

/** pytest -q on a fixture file, leaving no cache or bytecode in the repo. */
function pytest(file: string) {
  return runCommand(
    python3(),
    ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', join(FIXTURES, file)],
    {
      env: { ...runnerEnv(), PYTHONDONTWRITEBYTECODE: '1', PYTEST_DISABLE_PLUGIN_AUTOLOAD: '1' },
    },
  );
}

/** go test in a fixture module: offline (no module proxy), the user's build cache. */
function goTest(module: string) {
  const env = runnerEnv();
  return runCommand('go', ['test', '-count=1', '-v', './...'], {
    cwd: join(FIXTURES, module),
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
}

describe('shimkit serve from bats, pytest and Go (HT-10)', () => {
  it('HT-10 bats: serve --detach in setup, eval of its lines, expect/enqueue, curl, requests, verify, stop in teardown', async () => {
    const r = await bats('serve.bats');
    const out = r.stdout.toString() + r.stderr.toString();
    expect(r.code, out).toBe(0);
    expect(out).toContain('ok 1 a chat completion streams the scripted text');
    expect(out).toContain(
      'ok 2 a 429 with retry-after-ms, and verify fails while a response is unused',
    );
  });

  it.skipIf(!hasPytest && skipped('pytest', 'apt-get install python3-pytest'))(
    'HT-10 pytest: a fixture serves detached (--json env) and stops; urllib streams sse.chat and gets the 429',
    async () => {
      const r = await pytest('test_serve_cli.py');
      const out = r.stdout.toString() + r.stderr.toString();
      expect(r.code, out).toBe(0);
      expect(out).toMatch(/2 passed/);
    },
  );

  it.skipIf(!hasGo && skipped('go', 'apt-get install golang-go'))(
    'HT-10 Go: go test with net/http against serve --detach --json; t.Cleanup stops it',
    async () => {
      const r = await goTest('serve-go');
      const out = r.stdout.toString() + r.stderr.toString();
      expect(r.code, out).toBe(0);
      expect(out).toContain('--- PASS: TestServeStreamsChatAndRateLimits');
    },
    180_000, // a cold Go build cache builds net/http first
  );
});

describe('playbooks from bats, pytest and Go (PB-07)', () => {
  it('PB-07 bats: serve --playbook in setup; curl is the agent (a tool call, its result under the call id, the answer); tool-results --json; verify fails, then passes', async () => {
    const r = await bats('playbook.bats');
    const out = r.stdout.toString() + r.stderr.toString();
    expect(r.code, out).toBe(0);
    expect(out).toContain("ok 1 a tool call, its result under the call's id, then the answer");
    expect(out).toContain('ok 2 verify fails until the playbook was played through');
  });

  it.skipIf(!hasPytest && skipped('pytest', 'apt-get install python3-pytest', 'PB-07'))(
    'PB-07 pytest: a fixture serves --playbook detached and stops; a urllib agent loop on Anthropic Messages (a tool call, parallel calls, a tool_result with is_error, the answer); tool-results --json; a wrong prompt gets the 500',
    async () => {
      const r = await pytest('test_playbook_cli.py');
      const out = r.stdout.toString() + r.stderr.toString();
      expect(r.code, out).toBe(0);
      expect(out).toMatch(/2 passed/);
    },
  );

  it.skipIf(!hasGo && skipped('go', 'apt-get install golang-go', 'PB-07'))(
    'PB-07 Go: go test with a net/http agent loop on the Responses API (function_call_output items) against serve --playbook; tool-calls --json; t.Cleanup stops it',
    async () => {
      const r = await goTest('playbook-go');
      const out = r.stdout.toString() + r.stderr.toString();
      expect(r.code, out).toBe(0);
      expect(out).toContain('--- PASS: TestAgentChecksTheDeploy');
    },
    180_000, // a cold Go build cache builds net/http first
  );
});

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCommand, testDir } from '../helpers/index.js';
import { REPO, shimkitOnPath } from './helpers.js';

/**
 * CLI-01 from the languages it is for: the bats, pytest and Go suites in
 * test/cli/{bats,python,go} mock git with `shimkit`, run test/cli/fixtures/release.sh
 * and verify. `.ci/run` installs python3-pytest and golang-go and sets
 * SHIMKIT_LANGUAGES_REQUIRED=1; elsewhere a missing tool skips its suite, loudly.
 */
const required = process.env.SHIMKIT_LANGUAGES_REQUIRED === '1';

function has(command: string, args: string[]): boolean {
  return spawnSync(command, args, { stdio: 'ignore' }).status === 0;
}

function missing(tool: string, install: string): boolean {
  if (required) return false; // then the suite runs and fails on its own
  console.warn(
    `\n*** SKIPPED: ${tool} is not installed, so its CLI-01 suite did not run. Install it (${install}) or run .ci/run as root. ***\n`,
  );
  return true;
}

const python = has('python3', ['--version']);
const pytest = python && has('python3', ['-m', 'pytest', '--version']);
const go = has('go', ['version']);

describe('the shimkit command from bats, pytest and Go', () => {
  it('CLI-01 bats: the release script, with git mocked by shimkit mock/enqueue/calls/verify', async () => {
    const bats = join(
      createRequire(import.meta.url).resolve('bats/package.json'),
      '..',
      'bin',
      'bats',
    );
    const { env } = shimkitOnPath();
    const r = await runCommand(bats, ['--tap', join(REPO, 'test/cli/bats/release.bats')], {
      env: { ...env, TMPDIR: testDir() },
    });
    const out = r.stdout.toString();
    expect(out + r.stderr.toString(), 'bats output').toMatch(/^1\.\.3$/m);
    expect(r.code, out).toBe(0);
    expect(out).toContain('ok 1 release tags and pushes the current branch');
    expect(out).toContain('ok 2 a rejected push fails the release');
    expect(out).toContain('ok 3 verify fails when the script never pushes');
  });

  it.skipIf(!python && missing('python3', 'apt-get install python3 python3-pytest'))(
    'CLI-01 pytest (or unittest): the release script, with git mocked by shimkit',
    async () => {
      const { env } = shimkitOnPath();
      const dir = join(REPO, 'test/cli/python');
      const args = pytest
        ? ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'test_release.py']
        : ['-m', 'unittest', '-v', 'test_release'];
      if (!pytest)
        console.warn(
          '\n*** pytest is not installed: running test_release.py under unittest. ***\n',
        );
      const r = await runCommand('python3', args, {
        cwd: dir,
        env: { ...env, TMPDIR: testDir(), PYTHONDONTWRITEBYTECODE: '1' },
      });
      const out = r.stdout.toString() + r.stderr.toString();
      expect(r.code, out).toBe(0);
      expect(out).toMatch(pytest ? /3 passed/ : /Ran 3 tests[\s\S]*OK/);
    },
  );

  it.skipIf(!go && missing('go', 'apt-get install golang-go'))(
    'CLI-01 Go (os/exec): the release script, with git mocked by shimkit',
    async () => {
      const { env } = shimkitOnPath();
      const tmp = testDir();
      const r = await runCommand('go', ['test', '-count=1', '-v', './...'], {
        cwd: join(REPO, 'test/cli/go'),
        env: {
          ...env,
          TMPDIR: tmp,
          GOFLAGS: '-mod=mod',
          GOPROXY: 'off',
          GOTOOLCHAIN: 'local',
          GOCACHE: process.env.GOCACHE ?? join(process.env.HOME ?? tmp, '.cache', 'go-build'),
        },
      });
      const out = r.stdout.toString() + r.stderr.toString();
      expect(r.code, out).toBe(0);
      expect(out).toContain('--- PASS: TestReleaseTagsAndPushes');
      expect(out).toContain('--- PASS: TestVerifyFailsOnAnUnusedResponse');
    },
    180_000, // a fresh clone's Go build cache is cold: the standard library builds first
  );

  it("CLI-01 the README's bash, pytest and Go examples are copied from these suites, verbatim", () => {
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    const section = readme.slice(
      readme.indexOf('## From bash, pytest or Go'),
      readme.indexOf('## Test runners'),
    );
    const block = (lang: string) =>
      new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``).exec(section)?.[1];
    for (const [lang, file] of [
      ['bash', 'test/cli/bats/release.bats'],
      ['python', 'test/cli/python/test_release.py'],
      ['go', 'test/cli/go/release_test.go'],
    ] as const) {
      const example = block(lang);
      expect(example, `a ${lang} block in the README`).toBeTruthy();
      expect(readFileSync(join(REPO, file), 'utf8'), file).toContain(example);
    }
  });
});

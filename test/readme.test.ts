// Every code block of README.md runs as it is printed. The TypeScript ones are
// copied into test/readme/ by `npm run readme` (scripts/readme-snippets.mjs)
// and run there as ordinary tests; this file checks those copies are current,
// and runs the others: the jest file under jest, the bats, pytest and Go files
// in a project laid out as the README says, and the shell commands' places.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kindOf, type ReadmeBlock, readmeBlocks } from '../scripts/readme-snippets.mjs';
import { serverTestDir } from './cli/server-helpers.js';
import { python3, runCommand, testDir } from './helpers/index.js';
import { withoutLeakVars } from './helpers/leaks.js';

const REPO = new URL('..', import.meta.url).pathname;
const GENERATOR = join(REPO, 'scripts', 'readme-snippets.mjs');
const require = createRequire(import.meta.url);

/** `.ci/run` installs these; elsewhere a missing one skips its example, loudly. */
const required = process.env.SHIMKIT_LANGUAGES_REQUIRED === '1';
function missing(tool: string, install: string): boolean {
  if (required) return false; // then the example runs, and fails on its own
  console.warn(
    `\n*** SKIPPED: ${tool} is not installed, so the README's ${tool} example did not run. Install it (${install}) or run .ci/run as root. ***\n`,
  );
  return true;
}
const works = (command: string, args: string[]) =>
  spawnSync(command, args, { stdio: 'ignore' }).status === 0;

/** The blocks that are not TypeScript (test/readme/ has those): this file runs them. */
const blocks = readmeBlocks().filter((b) => !['setup', 'file', 'body', 'text'].includes(kindOf(b)));

const block = (lang: string, heading: string): ReadmeBlock => {
  const found = blocks.filter((b) => b.lang === lang && b.heading === heading);
  expect(found, `one ${lang} block under "${heading}" in README.md`).toHaveLength(1);
  return found[0] as ReadmeBlock;
};

/**
 * A project as the README lays it out: shimkit installed (node_modules/shimkit
 * is this repo, node_modules/.bin/shimkit its command, as npm links them) and
 * the script under test, release.sh, in its root.
 */
function project(): string {
  const dir = testDir('shimkit-readme-project-');
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(REPO, join(dir, 'node_modules', 'shimkit'));
  symlinkSync('../shimkit/dist/cli.js', join(dir, 'node_modules', '.bin', 'shimkit'));
  copyFileSync(join(REPO, 'test', 'fixtures', 'release.sh'), join(dir, 'release.sh'));
  return dir;
}

const copy = (b: ReadmeBlock, dir: string, name: string) => writeFileSync(join(dir, name), b.code);

describe('README.md: every example runs as it is printed', () => {
  it('MB-01 the TypeScript examples in test/readme/ are what README.md prints (npm run readme writes them)', () => {
    const r = spawnSync(process.execPath, [GENERATOR, '--check'], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('MB-01 every block is run somewhere: TypeScript in test/readme/, the rest here or by .ci/run', () => {
    const text = readFileSync(join(REPO, 'README.md'), 'utf8');
    const fences = text.split('\n').filter((line) => /^```\w+$/.test(line)).length;
    const tsKinds = readmeBlocks()
      .filter((b) => b.lang === 'ts')
      .map(kindOf);
    expect(new Set(tsKinds)).toEqual(new Set(['setup', 'body', 'file']));
    // Each of the others is run by one test of this file, or (the two shell blocks) by CI.
    expect(blocks.map((b) => `${b.lang} ${b.heading}`).sort()).toEqual(
      [
        'bash From bash, pytest or Go: the `shimkit` command',
        'bash A mock OpenAI or Anthropic API: `shimkit serve`',
        'bash Play the model from any language: `shimkit serve --playbook`',
        'go From bash, pytest or Go: the `shimkit` command',
        'js jest and node:test',
        'js Three leaks, as vitest prints them',
        'python From bash, pytest or Go: the `shimkit` command',
        'sh Quick start',
        'sh Quick start',
        'sh Quick start',
      ].sort(),
    );
    expect(tsKinds.length + blocks.length).toBe(fences);
  });

  it('CLI-03 the set-up commands are the ones CI runs: npm ci and npm test in .ci/run, the tarball install in readme.stress.test.ts', () => {
    const commands = blocks
      .filter((b) => b.lang === 'sh')
      .flatMap((b) => b.code.split('\n'))
      .map((line) => line.replace(/\s+#.*$/, '').trim())
      .filter(Boolean);
    expect(commands).toEqual([
      'npm ci && npm pack',
      'npm install --save-dev ../shimkit/shimkit-0.1.0.tgz',
      'npm ci && npm run demo',
      'npm test',
    ]);
    const ci = readFileSync(join(REPO, '.ci', 'run'), 'utf8');
    expect(ci).toMatch(/^npm ci /m);
    expect(ci).toMatch(/^npm test /m);
    const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8'));
    expect(`shimkit-${pkg.version}.tgz`).toBe('shimkit-0.1.0.tgz');
    expect(pkg.scripts.prepack).toContain('scripts/build.mjs'); // npm pack ships dist/
    expect(pkg.scripts.demo).toContain('examples/orchestrator/demo.mjs'); // what examples.test.ts runs
  });

  it('VT-02 VT-04 the jest example runs under jest', async () => {
    const dir = project();
    copy(block('js', 'jest and node:test'), dir, 'pushes.test.js');
    writeFileSync(join(dir, 'package.json'), '{ "name": "app", "private": true }\n');
    const r = await runCommand(
      process.execPath,
      [require.resolve('jest/bin/jest'), '--ci', '--rootDir', dir, join(dir, 'pushes.test.js')],
      { cwd: dir, env: { ...process.env, TMPDIR: testDir() } },
    );
    const out = r.stdout.toString() + r.stderr.toString();
    expect(r.code, out).toBe(0);
    expect(out).toMatch(/Tests: +1 passed, 1 total/);
  });

  it.runIf(process.platform === 'linux')(
    'LK-01 LK-02 LK-07 the three leaks fail under vitest with shimkit/vitest/sanitize, each with the block README.md prints',
    async () => {
      const dir = project();
      copy(block('js', 'Three leaks, as vitest prints them'), dir, 'app.test.js');
      symlinkSync(join(REPO, 'node_modules', 'vitest'), join(dir, 'node_modules', 'vitest'));
      writeFileSync(
        join(dir, 'package.json'),
        '{ "name": "app", "private": true, "type": "module" }\n',
      );
      writeFileSync(
        join(dir, 'vitest.config.js'),
        "import { defineConfig } from 'vitest/config';\nexport default defineConfig({ test: { setupFiles: ['shimkit/vitest/sanitize'] } });\n",
      );
      const env: NodeJS.ProcessEnv = {
        ...withoutLeakVars(process.env),
        TMPDIR: testDir(),
        CI: 'true',
        NO_COLOR: '1',
      };
      for (const name of Object.keys(env)) if (name.startsWith('VITEST')) delete env[name];
      const r = await runCommand(
        process.execPath,
        [join(REPO, 'node_modules', 'vitest', 'vitest.mjs'), 'run'],
        { cwd: dir, env, timeout: 60_000 },
      );
      const out = r.stdout.toString() + r.stderr.toString();
      expect(r.code, out).toBe(1);
      expect(out).toMatch(/Tests +3 failed \(3\)/);
      // The README's block, and the run's: each FAIL line and its report, with pids,
      // ports, sizes, times and absolute paths made alike (they differ from run to run).
      const printed = readmeBlocks().find(
        (b) => b.lang === '' && b.heading === 'Three leaks, as vitest prints them',
      );
      const normal = (text: string) =>
        text
          .split('\n')
          .filter((line) => /^(FAIL|LeakError| {2}\S| {11}\S)/.test(line))
          .map((line) =>
            line
              .trim()
              .replace(/; waited \d+ ms for what was ending/, '')
              .replace(/(^|[\s(])\/[^\s)\]]+/g, '$1PATH')
              .replace(/\d+/g, 'N'),
          );
      // Bytes "not read" are those still in the sockets' kernel buffers: undici may have
      // taken them into its own memory by then, on a busy machine. That line may be absent.
      const unread = 'holds: N B written to clients and not read by them';
      const ran = normal(out.replace(/^ FAIL {2}/gm, 'FAIL  ')).filter((line) => line !== unread);
      const shown = normal(printed?.code ?? '');
      expect(shown).toContain(unread);
      expect(ran, out).toEqual(shown.filter((line) => line !== unread));
    },
  );

  it('CLI-01 the bats example, run by bats from the project root', async () => {
    const dir = project();
    copy(block('bash', 'From bash, pytest or Go: the `shimkit` command'), dir, 'release.bats');
    const bats = join(require.resolve('bats/package.json'), '..', 'bin', 'bats');
    const r = await runCommand(bats, ['--tap', 'release.bats'], {
      cwd: dir,
      env: { ...process.env, TMPDIR: testDir() },
    });
    const out = r.stdout.toString() + r.stderr.toString();
    expect(r.code, out).toBe(0);
    expect(out).toContain('ok 1 release tags and pushes the current branch');
  });

  it('HT-10 the shimkit serve example, run by bats from the project root', async () => {
    const dir = project();
    copy(block('bash', 'A mock OpenAI or Anthropic API: `shimkit serve`'), dir, 'api.bats');
    const bats = join(require.resolve('bats/package.json'), '..', 'bin', 'bats');
    // A server the example left running (a failed teardown) is killed when the test ends.
    const r = await runCommand(bats, ['--tap', 'api.bats'], {
      cwd: dir,
      env: { ...process.env, TMPDIR: serverTestDir() },
    });
    const out = r.stdout.toString() + r.stderr.toString();
    expect(r.code, out).toBe(0);
    expect(out).toContain('ok 1 a chat stream, then a rate limit');
  });

  it('PB-07 the shimkit serve --playbook example, run by bats from the project root', async () => {
    const dir = project();
    copy(
      block('bash', 'Play the model from any language: `shimkit serve --playbook`'),
      dir,
      'agent.bats',
    );
    const bats = join(require.resolve('bats/package.json'), '..', 'bin', 'bats');
    // A server the example left running (a failed teardown) is killed when the test ends.
    const r = await runCommand(bats, ['--tap', 'agent.bats'], {
      cwd: dir,
      env: { ...process.env, TMPDIR: serverTestDir() },
    });
    const out = r.stdout.toString() + r.stderr.toString();
    expect(r.code, out).toBe(0);
    expect(out).toContain('ok 1 the model calls bash, then answers with what it returned');
  });

  const python = python3();
  const pytest = works(python, ['-m', 'pytest', '--version']);
  it.skipIf(!works(python, ['--version']) && missing('python3', 'apt-get install python3'))(
    'CLI-01 the pytest example, run by pytest (or unittest) from the project root',
    async () => {
      const dir = project();
      copy(
        block('python', 'From bash, pytest or Go: the `shimkit` command'),
        dir,
        'test_release.py',
      );
      if (!pytest)
        console.warn('\n*** pytest is not installed: running the example under unittest. ***\n');
      const args = pytest
        ? ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'test_release.py']
        : ['-m', 'unittest', '-v', 'test_release'];
      const r = await runCommand(python, args, {
        cwd: dir,
        env: {
          ...process.env,
          TMPDIR: testDir(),
          PYTHONDONTWRITEBYTECODE: '1',
          PYTEST_DISABLE_PLUGIN_AUTOLOAD: '1', // the host's pytest plugins: seconds to load, none needed
        },
      });
      const out = r.stdout.toString() + r.stderr.toString();
      expect(r.code, out).toBe(0);
      expect(out).toMatch(pytest ? /1 passed/ : /Ran 1 test[\s\S]*OK/);
    },
  );

  it.skipIf(!works('go', ['version']) && missing('go', 'apt-get install golang-go'))(
    'CLI-01 the Go example, run by go test with SHIMKIT set to the command',
    async () => {
      const dir = project();
      copy(block('go', 'From bash, pytest or Go: the `shimkit` command'), dir, 'release_test.go');
      writeFileSync(join(dir, 'go.mod'), 'module example.com/release\n\ngo 1.19\n');
      const tmp = testDir();
      const r = await runCommand('go', ['test', '-count=1', '-v', './...'], {
        cwd: dir,
        env: {
          ...process.env,
          SHIMKIT: join(dir, 'node_modules', '.bin', 'shimkit'), // the README's other way
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
    },
    180_000, // a fresh clone's Go build cache is cold: the standard library builds first
  );
});

// The README's Quick start as a newcomer follows it, each command as printed:
// in a clone, `npm ci && npm pack`; in a new project beside it, the tarball
// install, then the first test under vitest against the installed package; and
// in the clone, `npm ci && npm run demo`. npm run test:stress (npm ci twice and
// a build: minutes, and the npm registry or a warm npm cache).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ReadmeBlock, readmeBlocks } from '../scripts/readme-snippets.mjs';
import { runCommand, testDir } from './helpers/index.js';

const REPO = new URL('..', import.meta.url).pathname;

const quickStart = () => readmeBlocks().filter((b) => b.heading === 'Quick start');

/** Run one README shell block with bash, as a reader pastes it. */
async function shell(code: string, cwd: string, env: NodeJS.ProcessEnv) {
  const r = await runCommand('bash', ['-e', '-c', code], { cwd, env });
  const out = r.stdout.toString() + r.stderr.toString();
  expect(r.code, `${code}\n${out}`).toBe(0);
  return out;
}

describe('README.md Quick start, followed as printed (stress)', () => {
  it('CLI-03 MB-06 a clone packs the tarball, a new project installs it and its first test passes, and the clone runs the demo', async () => {
    const [pack, install, dev] = quickStart().filter((b) => b.lang === 'sh') as ReadmeBlock[];
    const [first] = quickStart().filter((b) => b.lang === 'ts') as ReadmeBlock[];
    expect(pack?.code).toContain('npm pack');
    expect(install?.code).toContain('npm install');
    expect(dev?.code).toContain('npm run demo');
    expect(first?.code).toContain("from 'shimkit'");

    const home = testDir('shimkit-newcomer-');
    // A warm npm cache is used when it has what is asked; the registry otherwise.
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      npm_config_prefer_offline: 'true',
      npm_config_fund: 'false',
    };
    const clone = join(home, 'shimkit');
    const git = await runCommand('git', ['clone', '--quiet', REPO, clone]);
    expect(git.code, git.stderr.toString()).toBe(0);
    await shell(pack?.code as string, clone, env);

    const app = join(home, 'app');
    mkdirSync(app);
    await shell('npm init -y >/dev/null', app, env);
    await shell(install?.code as string, app, env);
    const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'));
    expect(manifest.devDependencies.shimkit).toBe('file:../shimkit/shimkit-0.1.0.tgz');

    // "A first test (vitest here …)": the newcomer adds vitest, at the version shimkit is tested with.
    const vitest = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).devDependencies
      .vitest;
    await shell(`npm install --save-dev vitest@${vitest} >/dev/null`, app, env);
    writeFileSync(join(app, 'release.test.ts'), first?.code as string);
    const { FORCE_COLOR: _, ...plain } = env;
    const out = await shell('node_modules/.bin/vitest run release.test.ts', app, {
      ...plain,
      NO_COLOR: '1',
      TMPDIR: testDir(),
    });
    expect(out).toMatch(/Tests +1 passed/);

    const demo = await shell(dev?.code.split('\n')[0] as string, clone, env);
    expect(demo).toContain('every scripted response was used exactly once.');
  }, 900_000);
});

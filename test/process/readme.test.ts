// The README's sandbox and test-process examples, run as tests (copied into
// README.md under the same headings).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createMockBinDir, createSandbox, run, spawnProcess } from '../../src/index.js';
import { isAlive } from '../helpers/index.js';

const cli = fileURLToPath(new URL('../fixtures/release-cli.mjs', import.meta.url));
const PROMPTS = fileURLToPath(new URL('../fixtures/prompts.sh', import.meta.url));

describe('README sandbox and process examples', () => {
  it('SP-01 README: test a CLI that calls git and docker', async () => {
    let leftovers: string[] = [];
    {
      // README: test a CLI that calls git and docker
      await using sb = createSandbox();
      await using bin = createMockBinDir();
      const git = bin.mock('git', { responses: [{ stdout: 'main\n' }, {}] });
      const docker = bin.mock('docker', {
        responses: [{ stdout: 'sha256:4f1c\n' }, { stdout: 'pushed\n' }],
      });
      sb.use(bin); // the mocks go first on the sandbox PATH

      const r = await run('node', [cli, 'v1.2.0'], { sandbox: sb, timeoutMs: 10_000 });

      expect(r).toMatchObject({
        exitCode: 0,
        stdout: 'built sha256:4f1c\nreleased app:v1.2.0\n',
        timedOut: false,
      });
      expect(git.calls().map((c) => c.argv)).toEqual([
        ['rev-parse', '--abbrev-ref', 'HEAD'],
        ['tag', 'v1.2.0'],
      ]);
      expect(docker.calls().map((c) => c.argv)).toEqual([
        ['build', '-q', '-t', 'app:v1.2.0', '.'],
        ['push', 'app:v1.2.0'],
      ]);
      expect(docker.lastCall()?.cwd).toBe(sb.workspace);
      git.assertDone();
      docker.assertDone();
      leftovers = [sb.root, bin.root];
    }
    // `await using` disposed both: nothing is left on disk.
    for (const dir of leftovers) expect(existsSync(dir)).toBe(false);
  });

  it('SP-04 README: a failing push, seen from the CLI', async () => {
    // README: a failing push, seen from the CLI
    await using sb = createSandbox();
    await using bin = createMockBinDir();
    bin.mock('git', { responses: [{ stdout: 'main\n' }, {}] });
    bin.mock('docker', {
      responses: [{ stdout: 'sha256:4f1c\n' }, { exitCode: 1, stderr: 'denied: no access\n' }],
    });
    sb.use(bin);

    const r = await run('node', [cli, 'v1.2.0'], { sandbox: sb });

    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe('docker push failed: denied: no access\n');
  });

  it('SP-08 README: answer prompts', async () => {
    // README: answer prompts
    await using p = spawnProcess('sh', [PROMPTS]);
    p.respond(/Continue\? \[y\/N\] $/, 'y\n');
    p.respond('Password: ', 'hunter2\n', { stream: 'stderr' });

    expect(await p.wait({ timeoutMs: 5000 })).toMatchObject({ exitCode: 0 });
    expect(p.stdout.tail()).toContain('first=y second=y password-length=7');
  });

  it('SP-04 README: start a server, wait until it is ready, close the whole tree', async () => {
    // README: start a server, wait until it is ready, close the whole tree
    const server = spawnProcess('node', [
      '-e',
      "require('node:http').createServer((q, s) => s.end('ok')).listen(0, function () { console.log('listening on ' + this.address().port) })",
    ]);
    const [, port] = await server.waitForOutput(/listening on (\d+)/, { timeoutMs: 5000 });

    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('ok');

    const exit = await server.close(); // SIGTERM to the process group, SIGKILL after graceMs
    expect(exit.signal).toBe('SIGTERM');
    expect(isAlive(server.pid)).toBe(false);
  });
});

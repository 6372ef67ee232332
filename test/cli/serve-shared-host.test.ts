import { chmodSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { canSwitchUser, OTHER_USER, runCommand } from '../helpers/index.js';
import { inSystemTmpdir } from '../helpers/leaks.js';
import { curl } from '../helpers/server.js';
import { CLI, shimkit, shimkitOk } from './helpers.js';
import { parseExports, serveDetached, serverTestDir } from './server-helpers.js';

const OTHER = OTHER_USER;
const canSwitch = canSwitchUser;

/** `cmd …` run as the other user. */
function asOther(command: string, args: readonly string[]) {
  return runCommand('runuser', ['-u', OTHER, '--', command, ...args]);
}

// The sweep, the registry or another user work in the system temp dir itself:
// the leak sanitizer's per-test TMPDIR is off here (inSystemTmpdir).
describe.skipIf(!canSwitch)('another local user (HT-15)', inSystemTmpdir, () => {
  it("HT-15 another user's commands on a server dir they may not enter are refused, naming the dir and its owner (exit 3, no stack)", async () => {
    const d = join(serverTestDir(), 'api'); // under a 0700 dir of root's
    await serveDetached(d);
    for (const args of [
      ['expect', d, '--status', '200'],
      ['enqueue', d, '--status', '200'],
      ['requests', d],
      ['verify', d],
      ['stop', d],
      ['tool-calls', d],
      ['serve', '--dir', d],
    ]) {
      const r = await asOther(process.execPath, [CLI, ...args]);
      const stderr = r.stderr.toString();
      expect(r.code, `${args[0]}: ${stderr}`).toBe(3);
      expect(stderr).not.toMatch(/unexpected error|\n\s+at /);
      expect(stderr).toContain(d);
      expect(stderr).toMatch(/belongs to root \(uid 0\)/);
      expect(stderr).toMatch(/this user is shimkit-other \(uid \d+\)/);
    }
    // Nothing of it reached the server.
    const requests = await shimkit(['requests', d, '--json']);
    expect(requests.code).toBe(0);
  });

  it("HT-15 the server dir of another user's server is refused by name (exit 3)", async () => {
    const root = serverTestDir();
    chmodSync(root, 0o1777); // as /tmp is: the other user makes a dir in it
    const d = join(root, 'theirs');
    // Their server, owned by no process (runuser exits at once): the test's dir hook kills it.
    const started = await asOther(process.execPath, [
      CLI,
      'serve',
      '--dir',
      d,
      '--detach',
      '--owner-pid',
      '0',
    ]);
    expect(started.code, started.stderr.toString()).toBe(0);
    for (const args of [
      ['requests', d],
      ['verify', d],
      ['stop', d],
      ['serve', '--dir', d],
    ]) {
      const r = await shimkit(args);
      expect(r.code, r.stderr.toString()).toBe(3);
      expect(r.stderr.toString()).toContain(`${d} belongs to shimkit-other (uid`);
    }
  });
});

// The sweep, the registry or another user work in the system temp dir itself:
// the leak sanitizer's per-test TMPDIR is off here (inSystemTmpdir).
describe.skipIf(!canSwitch)('shimkit serve on a shared host (HT-15)', inSystemTmpdir, () => {
  it('HT-15 serve --require-token: the export lines carry the token; another user gets 401 and takes nothing; the owner gets the response', async () => {
    const d = join(serverTestDir(), 'api');
    const served = await serveDetached(d, ['--require-token']);
    const token = served.env.SHIMKIT_SERVER_TOKEN as string;
    expect(token).toMatch(/^shimkit-/);
    expect([served.env.OPENAI_API_KEY, served.env.ANTHROPIC_API_KEY]).toEqual([token, token]);
    await shimkitOk(['expect', d, '--path', '/v1/chat/completions', '--json', '{"json":{"a":1}}']);
    const url = `${served.url}/v1/chat/completions`;
    const theirs = await asOther('curl', ['-sS', '--noproxy', '*', '-d', '{}', url]);
    expect(theirs.stdout.toString()).toContain('shimkit_token_required');
    const mine = await curl(['-H', `authorization: Bearer ${token}`, '-d', '{}', url]);
    expect(mine.stdout.toString()).toBe('{"a":1}');
    const log = JSON.parse(await shimkitOk(['requests', d, '--json']));
    expect(log).toMatchObject([
      { claimedBy: null, response: { status: 401 }, error: expect.stringMatching(/refused/) },
      { claimedBy: 'expect#1', response: { status: 200 } },
    ]);
    expect((await shimkitOk(['requests', d])).split('\n')[0]).toMatch(
      /^#1 POST \/v1\/chat\/completions → 401 \d+ bytes complete \(refused: no token\)$/,
    );
    await shimkitOk(['verify', d]);
  });

  it('HT-15 serve --socket: export lines name the socket; curl --unix-socket reaches it; another user cannot connect', async () => {
    const d = join(serverTestDir(), 'api');
    const sock = join(d, 'api.sock');
    const served = await serveDetached(d, ['--socket', sock]);
    expect(served.env).toEqual({
      SHIMKIT_SERVER_SOCKET: sock,
      SHIMKIT_SERVER_URL: 'http://localhost',
    });
    await shimkitOk(['enqueue', d, '--json', '{"json":{"via":"socket"}}']);
    const mine = await curl(['--unix-socket', sock, 'http://localhost/v1/models']);
    expect(mine.stdout.toString()).toBe('{"via":"socket"}');
    const theirs = await asOther('curl', [
      '-sS',
      '--unix-socket',
      sock,
      'http://localhost/v1/models',
    ]);
    expect(theirs.code).toBe(7);
    expect(JSON.parse(await shimkitOk(['requests', d, '--json']))).toHaveLength(1);
    const usage = await shimkit(['serve', '--dir', join(d, 'x'), '--socket', sock, '--port', '0']);
    expect(usage.code).toBe(2);
    expect(usage.stderr.toString()).toMatch(/--socket listens on a Unix socket, not on TCP/);
  });
});

describe('shimkit serve --host beyond loopback (HT-15)', () => {
  it('HT-15 serve --host 0.0.0.0 prints the bound address and warns on stderr; the URL it exports still works', async () => {
    const d = join(serverTestDir(), 'api');
    const r = await shimkit(['serve', '--dir', d, '--host', '0.0.0.0', '--detach']);
    const { pid, url } = JSON.parse(readFileSync(join(d, 'server.json'), 'utf8'));
    onTestFinished(() => {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {}
    });
    expect(r.code).toBe(0);
    const port = /:(\d+)$/.exec(url)?.[1];
    const stderr = r.stderr.toString();
    expect(stderr).toContain(`serves ${url} (bound to 0.0.0.0:${port})`);
    expect(stderr).toMatch(
      /shimkit serve: warning: bound to 0\.0\.0\.0, every address of this machine, not loopback: other machines .* --socket PATH and --require-token\./,
    );
    const env = parseExports(r.stdout.toString());
    expect(env.OPENAI_BASE_URL).toBe(`${url}/v1`);
    expect((await curl([`${url}/v1/models`])).stdout.toString()).toContain('shimkit');
  });
});

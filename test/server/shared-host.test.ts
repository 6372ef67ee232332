import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { createMockServer, InvalidOptionError } from '../../src/index.js';
import { canSwitchUser, OTHER_USER, python3, runCommand, testDir } from '../helpers/index.js';
import { server } from '../helpers/server.js';

const PY_CLIENT = fileURLToPath(new URL('../fixtures/http_client.py', import.meta.url));
/** An HTTP proxy that is not there: a client that uses it fails to connect (curl exit 7). */
const BOGUS_PROXY = 'http://127.0.0.1:9';

const OTHER = OTHER_USER;
const canSwitch = canSwitchUser;

/** curl as given (no --noproxy: the env decides), at most 10 s; as `user` when given. */
function curlWith(args: readonly string[], env: NodeJS.ProcessEnv, user?: string) {
  const curl = ['curl', '-sS', '--max-time', '10', ...args];
  return user
    ? runCommand('runuser', ['-u', user, '--', ...curl], { env })
    : runCommand(curl[0] as string, curl.slice(1), { env });
}

describe('env() on ::1 (HT-01)', () => {
  it('HT-01 a server on ::1 is reached through env() by curl and python urllib with a bogus http_proxy set (NO_PROXY has ::1 and [::1])', async () => {
    const api = await server({ listen: { host: '::1' } });
    expect(api.url).toMatch(/^http:\/\/\[::1\]:\d+$/);
    api.expect({ path: '/v1/chat/completions' }, { status: 201, json: { id: 'x' }, times: 2 });
    const env: Record<string, string> = {
      ...api.env(),
      http_proxy: BOGUS_PROXY,
      HTTP_PROXY: BOGUS_PROXY,
    };
    expect(env.NO_PROXY?.split(',')).toEqual(expect.arrayContaining(['::1', '[::1]']));
    const c = await curlWith(['-d', '{}', `${env.OPENAI_BASE_URL}/chat/completions`], env);
    expect(c.stderr.toString()).toBe('');
    expect([c.code, c.stdout.toString()]).toEqual([0, '{"id":"x"}']);
    const p = await runCommand(python3(), [PY_CLIENT, '/chat/completions', '{}'], { env });
    expect(p.stderr.toString()).toBe('');
    expect(JSON.parse(p.stdout.toString())).toMatchObject({ status: 201, body: '{"id":"x"}' });
    expect(api.requests().map((r) => r.claimedBy)).toEqual(['expect#1', 'expect#1']);
  });
});

describe('requireToken (HT-15)', () => {
  it('HT-15 requireToken: env() carries a random token as both API keys; requests without it get 401, are logged as refused and use nothing', async () => {
    const api = await server({ requireToken: true });
    expect(api.token).toMatch(/^shimkit-[A-Za-z0-9_-]{32}$/);
    const env = api.env();
    expect([env.OPENAI_API_KEY, env.ANTHROPIC_API_KEY]).toEqual([api.token, api.token]);
    api.enqueue({ json: { answer: 'yours' } });
    const url = `${api.url}/v1/chat/completions`;
    const none = await curlWith(['-d', '{}', url], env);
    const wrong = await curlWith(
      ['-H', 'authorization: Bearer shimkit-test', '-d', '{}', url],
      env,
    );
    for (const r of [none, wrong]) {
      expect(r.code).toBe(0);
      const body = JSON.parse(r.stdout.toString());
      expect(body.error.code).toBe('shimkit_token_required');
      expect(body.error.message).toMatch(
        /requires its token .*Answered 401; nothing scripted was used/,
      );
    }
    expect(api.requests()).toMatchObject([
      {
        claimedBy: null,
        response: { status: 401 },
        error: expect.stringMatching(/carries no token/),
      },
      {
        claimedBy: null,
        response: { status: 401 },
        error: expect.stringMatching(/a token that is not this server/),
      },
    ]);
    // Still there for the owner: python urllib with env() (authorization: Bearer), then x-api-key.
    const p = await runCommand(python3(), [PY_CLIENT, '/chat/completions', '{}'], { env });
    expect(JSON.parse(p.stdout.toString())).toMatchObject({
      status: 200,
      body: '{"answer":"yours"}',
    });
    api.enqueue({ json: { answer: 'again' } });
    const k = await curlWith(['-H', `x-api-key: ${api.token}`, '-d', '{}', url], env);
    expect(k.stdout.toString()).toBe('{"answer":"again"}');
    expect(api.requests().map((r) => r.claimedBy)).toEqual([null, null, 'fifo#1', 'fifo#2']);
    api.assertDone();
  });

  it.skipIf(!canSwitch)(
    'HT-15 another local user (runuser) gets 401 from a requireToken server and takes nothing; the owner gets the response',
    async () => {
      const api = await server({ requireToken: true });
      api.expect({ path: '/v1/chat/completions' }, { json: { secret: 'the test’s' } });
      const url = `${api.url}/v1/chat/completions`;
      const theirs = await curlWith(['-d', '{}', url], { PATH: process.env.PATH }, OTHER);
      expect(theirs.code).toBe(0);
      expect(theirs.stdout.toString()).toContain('shimkit_token_required');
      expect(api.requests()).toMatchObject([{ claimedBy: null, response: { status: 401 } }]);
      const mine = await curlWith(
        ['-H', `authorization: Bearer ${api.token}`, '-d', '{}', url],
        api.env(),
      );
      expect(mine.stdout.toString()).toBe('{"secret":"the test’s"}');
      api.assertDone();
    },
  );

  it('HT-15 requireToken is checked when given', async () => {
    await expect(createMockServer({ requireToken: 'yes' as never })).rejects.toThrow(
      InvalidOptionError,
    );
    const api = await server();
    expect(api.token).toBeUndefined();
  });

  it('HT-15 requireToken with a cassette that records is refused (the upstream would get the token as the key); with a replay it is taken', async () => {
    const path = join(testDir(), 'chat.cassette.json');
    const recording = { path, mode: 'record', upstream: 'http://127.0.0.1:9' } as const;
    await expect(createMockServer({ requireToken: true, cassette: recording })).rejects.toThrow(
      "The `requireToken` option of createMockServer() cannot go with a cassette that records (mode 'record'): the program's API key would be the server's token, and the upstream needs the real one. Record without requireToken (on a host of your own), then replay with it (mode: 'replay').",
    );
    writeFileSync(path, JSON.stringify({ version: 1, kind: 'http', interactions: [] }));
    const api = await server({ requireToken: true, cassette: { path, mode: 'replay' } });
    expect(api.token).toMatch(/^shimkit-/);
  });
});

describe('a bind beyond loopback (HT-15)', () => {
  it('HT-15 createMockServer on 0.0.0.0 emits a SHIMKIT_NON_LOOPBACK process warning naming the bound address; loopback binds do not', async () => {
    const warnings: Error[] = [];
    const listener = (warning: Error) => {
      if ((warning as NodeJS.ErrnoException).code === 'SHIMKIT_NON_LOOPBACK')
        warnings.push(warning);
    };
    process.on('warning', listener);
    onTestFinished(() => {
      process.off('warning', listener);
    });
    const quiet = [await server(), await server({ listen: { host: '::1' } })];
    const open = await server({ listen: { host: '0.0.0.0' } });
    const port = /:(\d+)$/.exec(open.url)?.[1];
    expect(open.url).toBe(`http://127.0.0.1:${port}`);
    await vi.waitFor(() => expect(warnings).toHaveLength(1), { timeout: 4000 });
    expect(warnings[0]?.message).toContain(
      `listens on 0.0.0.0:${port}, every address of this machine`,
    );
    expect(warnings[0]?.message).toMatch(/requireToken: true/);
    expect(quiet).toHaveLength(2);
  });
});

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  any,
  createMockServer,
  DisposedError,
  InvalidOptionError,
  MockServerListenError,
  UnsupportedHereError,
  UnusedResponsesError,
} from '../../src/index.js';
import type { ServerCassette } from '../../src/server/cassette-format.js';
import { completion, firstJsonLine, spawnTracked, testDir } from '../helpers/index.js';
import { curl, server } from '../helpers/server.js';

// Regression tests for the API findings of the hostile review of createMockServer.

const DIST = fileURLToPath(new URL('../../dist/index.js', import.meta.url));

/** The error `fn` throws (or the promise rejects with). */
async function thrown(fn: () => unknown): Promise<Error> {
  try {
    await fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('it did not throw');
}

/** A node child that binds `path` (through createMockServer when `shimkit`, else net), says so, and is SIGKILLed. */
async function killedListener(path: string, shimkit: boolean): Promise<void> {
  const code = shimkit
    ? `const { createMockServer } = await import(${JSON.stringify(DIST)}); await createMockServer({ listen: { path: ${JSON.stringify(path)} } }); console.log('{}'); setInterval(() => {}, 1000);`
    : `(await import('node:net')).createServer().listen(${JSON.stringify(path)}, () => console.log('{}'));`;
  const child = spawnTracked(process.execPath, ['--input-type=module', '-e', code]);
  const done = completion(child);
  await firstJsonLine(child);
  child.kill('SIGKILL');
  await done;
  expect(existsSync(path)).toBe(true); // a SIGKILLed process leaves its socket file
}

describe('env() (HT-01)', () => {
  it('HT-01 env() of a Unix-socket server throws UnsupportedHereError naming the socket and what to do; url is http://localhost, documented as an origin only', async () => {
    const path = join(testDir(), 'api.sock');
    const api = await server({ listen: { path } });
    expect(api.url).toBe('http://localhost');
    expect(api.socketPath).toBe(path);
    const error = await thrown(() => api.env());
    expect(error).toBeInstanceOf(UnsupportedHereError);
    expect(error.message).toBe(
      `mock server ${path}: env() gives base URLs, and this server listens on a Unix socket, which the SDKs cannot reach through OPENAI_BASE_URL or ANTHROPIC_BASE_URL (its url, http://localhost, would send them to port 80). Listen on TCP for env() (the default: createMockServer() or listen: { port: 0 }), or hand the socket to the client: curl --unix-socket ${path} http://localhost/v1/models, or undici's new Agent({ connect: { socketPath } }).`,
    );
    api.enqueue({ text: 'through the socket' });
    const out = await curl(['--unix-socket', path, `${api.url}/v1/models`]);
    expect(out.stdout.toString()).toBe('through the socket');
  });

  it('HT-01 env(base) checks its argument: null, a string, an array or a non-string value is an InvalidOptionError naming `base`', async () => {
    const api = await server();
    for (const bad of [null, 'x', ['A=b'], 42]) {
      const error = await thrown(() => api.env(bad as never));
      expect(error, String(bad)).toBeInstanceOf(InvalidOptionError);
      expect(error.message).toMatch(
        /^Expected the `base` argument of env\(\) to be an env object such as process\.env \(variable names to strings\), or nothing \(process\.env\), got /,
      );
    }
    const error = await thrown(() => api.env({ PATH: '/bin', PORT: 8080 as never }));
    expect(error.message).toBe(
      'Expected the `base` argument of env() to be an env object such as process.env (variable names to strings); its "PORT" is 8080 (number).',
    );
    expect(api.env({ PATH: '/bin', GONE: undefined })).toMatchObject({ PATH: '/bin' });
    expect(api.env(undefined).OPENAI_BASE_URL).toBe(`${api.url}/v1`);
  });

  it('HT-01 the env option: NO_PROXY: null leaves NO_PROXY as the base has it (or out), no_proxy still gets loopback; a string is used as given', async () => {
    const api = await server({ env: { NO_PROXY: null } });
    expect(api.env({})).not.toHaveProperty('NO_PROXY');
    expect(api.env({})).toMatchObject({ no_proxy: '127.0.0.1,localhost,::1,[::1]' });
    expect(api.env({ NO_PROXY: 'corp.example' }).NO_PROXY).toBe('corp.example');
    const both = await server({ env: { NO_PROXY: null, no_proxy: null } });
    const env = both.env({ PATH: '/bin' });
    expect([env.NO_PROXY, env.no_proxy]).toEqual([undefined, undefined]);
    const given = await server({ env: { NO_PROXY: 'only.example', no_proxy: '{url}' } });
    expect(given.env({ NO_PROXY: 'base.example' })).toMatchObject({
      NO_PROXY: 'only.example',
      no_proxy: given.url,
    });
  });
});

describe('listen errors on a Unix socket (HT-12)', () => {
  it('HT-12 a socket path in a dir that does not exist: MockServerListenError saying the dir is missing (not EACCES about ports)', async () => {
    const dir = join(testDir(), 'missing', 'deeper');
    const path = join(dir, 'api.sock');
    const error = await thrown(() => createMockServer({ listen: { path } }));
    expect(error).toBeInstanceOf(MockServerListenError);
    expect(error).toMatchObject({ errno: 'ENOENT', address: path });
    expect(error.message).toBe(
      `createMockServer() cannot listen on ${path}: its dir ${dir} does not exist. Create it first (mkdirSync(dir, { recursive: true })), or use a path in a dir made with mkdtemp.`,
    );
    const file = join(testDir(), 'a-file');
    writeFileSync(file, '');
    const under = await thrown(() => createMockServer({ listen: { path: join(file, 's.sock') } }));
    expect(under).toMatchObject({ errno: 'ENOTDIR' });
    expect(under.message).toBe(
      `createMockServer() cannot listen on ${join(file, 's.sock')}: ${file} is not a dir. Use a path in a dir made with mkdtemp.`,
    );
  });

  it('HT-12 a stale socket file of a killed process that is not shimkit: the error says nothing listens there and how to remove it; the file is left', async () => {
    const path = join(testDir(), 'stale.sock');
    await killedListener(path, false);
    const error = await thrown(() => createMockServer({ listen: { path } }));
    expect(error).toBeInstanceOf(MockServerListenError);
    expect(error).toMatchObject({ errno: 'EADDRINUSE', address: path });
    expect(error.message).toBe(
      `createMockServer() cannot listen on ${path}: a stale socket file is there (nothing listens on it: connecting is refused), left by a process that was killed before it could remove it, and not one the leftover registry knows as shimkit's. Remove the file (rm ${path}) and try again, or use a path of this test's own (in a dir made with mkdtemp); \`shimkit clean\` removes the sockets shimkit's own killed processes left.`,
    );
    expect(existsSync(path)).toBe(true);
  });

  it('HT-12 a stale socket a SIGKILLed shimkit process left (in its leftover registry) is removed, and the server listens there', async () => {
    const path = join(testDir(), 'ours.sock');
    await killedListener(path, true);
    const api = await server({ listen: { path } });
    api.enqueue({ text: 'after the sweep' });
    expect((await curl(['--unix-socket', path, 'http://localhost/x'])).stdout.toString()).toBe(
      'after the sweep',
    );
  });

  it('HT-12 a socket something listens on: EADDRINUSE saying so; a regular file at the path: it is not a socket', async () => {
    const path = join(testDir(), 'live.sock');
    await server({ listen: { path } });
    const error = await thrown(() => createMockServer({ listen: { path } }));
    expect(error).toMatchObject({ errno: 'EADDRINUSE' });
    expect(error.message).toMatch(
      /Something listens on that socket: use a socket path of this test's own/,
    );
    const file = join(testDir(), 'plain');
    writeFileSync(file, 'x');
    const notSocket = await thrown(() => createMockServer({ listen: { path: file } }));
    expect(notSocket.message).toBe(
      `createMockServer() cannot listen on ${file}: a file that is not a socket is there. Remove it, or use a path of this test's own (in a dir made with mkdtemp).`,
    );
    expect(readFileSync(file, 'utf8')).toBe('x');
  });
});

describe('matches (HT-03)', () => {
  it('HT-03 method takes a string in any case, a RegExp (tested on the upper-case method) or any(); path takes any()', async () => {
    const api = await server();
    api.expect({ method: /^(GET|HEAD)$/, path: '/read' }, { text: 'read' }, { times: 'always' });
    api.expect({ method: 'post', path: any() }, { text: 'posted' }, { name: 'post' });
    api.expect({ method: any(), path: /^\/any/ }, { text: 'any method' });
    expect((await curl([`${api.url}/read`])).stdout.toString()).toBe('read');
    expect((await curl(['-I', `${api.url}/read`])).stdout.toString()).toMatch(/^HTTP\/1\.1 200/);
    expect((await curl(['-X', 'POST', `${api.url}/read`])).stdout.toString()).toBe('posted');
    expect((await curl(['-X', 'DELETE', `${api.url}/anything`])).stdout.toString()).toBe(
      'any method',
    );
    const miss = await curl(['-X', 'PUT', `${api.url}/read`]);
    expect(miss.stdout.toString()).toContain(
      "Closest: expectation 'expect#1' — method: expected /^(GET|HEAD)$/, got PUT.",
    );
    expect(api.requests().map((r) => r.claimedBy)).toEqual([
      'expect#1',
      'expect#1',
      'post',
      'expect#3',
      null,
    ]);
  });

  it('HT-03 a bad method or path says what each takes', async () => {
    const api = await server();
    expect((await thrown(() => api.expect({ method: 'GE T' }, {}))).message).toBe(
      'Expected `method` in the match of expect() #1 to be an HTTP method such as "POST" (any case), a RegExp such as /^(GET|HEAD)$/ (tested on the upper-case method) or any(), got "GE T" (string).',
    );
    expect((await thrown(() => api.expect({ path: 'v1' }, {}))).message).toBe(
      'Expected `path` in the match of expect() #1 to be a path starting with "/" (without the query), a RegExp or any(), got "v1" (string).',
    );
  });

  it('HT-03 a name another expectation has, or one shimkit gives (expect#<n>, fifo#<n>, cassette:…), is an InvalidOptionError; reset() frees names', async () => {
    const api = await server();
    api.expect({ path: '/a' }, {}, { name: 'plan' });
    api.expect({ path: '/b' }, {});
    const twice = await thrown(() => api.expect({ path: '/c' }, {}, { name: 'plan' }));
    expect(twice).toBeInstanceOf(InvalidOptionError);
    expect(twice.message).toBe(
      'Expected the `name` option of expect() #3 to be a name no other expectation or playbook has, got "plan": expectation #1 has it, and claimedBy could not tell the two apart. Give each its own name (reset() frees the names).',
    );
    for (const name of ['expect#2', 'expect#9', 'fifo#1', 'cassette:x.json#1']) {
      const error = await thrown(() => api.expect({ path: '/d' }, {}, { name }));
      expect(error.message, name).toMatch(/to be a name of your own, got "/);
    }
    api.reset();
    expect(api.expect({ path: '/a' }, {}, { name: 'plan' }).used).toBe(0);
  });

  it('HT-03 assertDone() counts uses, so the count agrees with the lists (3 of 4 uses made when "plan" was used 1 of 2 times)', async () => {
    const api = await server();
    api.expect({ path: '/plan' }, { text: 'p' }, { name: 'plan', times: 2 });
    api.expect({ path: '/spare' }, { text: 's' }, { optional: true });
    api.enqueue([{ text: 'a' }, { text: 'b' }]);
    for (const path of ['/plan', '/x', '/y']) await curl([`${api.url}${path}`]);
    const error = await thrown(() => api.assertDone());
    expect(error).toBeInstanceOf(UnusedResponsesError);
    expect(error.message.split('\n')[0]).toBe(
      `mock server ${api.url}: 3 of 4 scripted uses made; used too few times: expectation 'plan' { path: '/plan' } → {status:200,body:[1 bytes]} (1 of 2 times).`,
    );
  });
});

describe('cassettes (HT-09)', () => {
  it('HT-09 signed-URL and key-like query names are redacted in any case: X-Amz-Signature, X-Goog-Signature, X-Amz-Credential, API_KEY, Access_Token, sig', async () => {
    const path = join(testDir(), 'signed.json');
    const upstream = await server();
    upstream.enqueue({ json: { ok: true }, headers: { 'x-hub-signature-256': 'sha256=SECRET-H' } });
    const rec = await server({ cassette: { path, mode: 'record', upstream: upstream.url } });
    const query = {
      'X-Amz-Signature': 'SECRET-AMZ-SIG',
      'x-goog-signature': 'SECRET-GOOG-SIG',
      'X-Amz-Credential': 'SECRET-AMZ-CRED',
      'X-Amz-Security-Token': 'SECRET-AMZ-TOKEN',
      API_KEY: 'SECRET-API-KEY',
      Access_Token: 'SECRET-ACCESS',
      uploadSig: 'SECRET-CAMEL-SIG',
      'X-Amz-Expires': '900',
      page: '2',
    };
    const out = await curl([`${rec.url}/bucket/object?${new URLSearchParams(query)}`]);
    expect(out.stdout.toString()).toBe('{"ok":true}');
    expect(upstream.requests()[0]?.query).toEqual(query);
    await rec.dispose();
    const text = readFileSync(path, 'utf8');
    expect(text.match(/SECRET-[A-Z-]+/g)).toBeNull();
    const [interaction] = (JSON.parse(text) as ServerCassette).interactions;
    expect(interaction?.request.query).toEqual({
      'X-Amz-Signature': '[redacted]',
      'x-goog-signature': '[redacted]',
      'X-Amz-Credential': '[redacted]',
      'X-Amz-Security-Token': '[redacted]',
      API_KEY: '[redacted]',
      Access_Token: '[redacted]',
      uploadSig: '[redacted]',
      'X-Amz-Expires': '900',
      page: '2',
    });
    expect(interaction?.response.headers['x-hub-signature-256']).toBe('[redacted]');
  });

  it('HT-09 a cassette of another version names the version and the one this shimkit reads', async () => {
    const path = join(testDir(), 'v2.json');
    writeFileSync(path, JSON.stringify({ version: 2, kind: 'http', interactions: [] }));
    const error = await thrown(() => createMockServer({ cassette: { path, mode: 'replay' } }));
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect(error.message).toBe(
      `createMockServer(): the cassette ${path} is version 2; this shimkit reads version 1 (a newer shimkit wrote it: upgrade shimkit to replay it). Fix that by hand, or delete the file and record it again (SHIMKIT_CASSETTE_MODE=record).`,
    );
  });
});

describe('bodyBytes (HT-07)', () => {
  it('HT-07 bodyBytes counts the whole body past logBodyBytes; for a 413 the declared content-length, or the chunked bytes read when the limit was crossed', async () => {
    const api = await server({ logBodyBytes: 10, bodyLimitBytes: 100_000 });
    api.enqueue({ text: 'ok', times: 'always' });
    const file = join(testDir(), 'body');
    writeFileSync(file, 'x'.repeat(60_000));
    await curl(['--data-binary', `@${file}`, `${api.url}/whole`]);
    writeFileSync(file, 'y'.repeat(300_000));
    await curl(['--data-binary', `@${file}`, `${api.url}/declared`]);
    await curl([
      '-H',
      'transfer-encoding: chunked',
      '--data-binary',
      `@${file}`,
      `${api.url}/chunked`,
    ]);
    const [whole, declared, chunked] = api.requests();
    expect([whole?.body.length, whole?.bodyBytes]).toEqual([10, 60_000]);
    expect([declared?.response.status, declared?.bodyBytes]).toEqual([413, 300_000]);
    expect(chunked?.response.status).toBe(413);
    expect(chunked?.bodyBytes).toBeGreaterThan(100_000);
    expect(chunked?.bodyBytes).toBeLessThanOrEqual(300_000);
  });
});

describe('reset() (HT-06)', () => {
  it('HT-06 a pending waitForRequests() rejects with DisposedError at reset(), and never resolves with requests of the new script', async () => {
    const api = await server();
    api.enqueue({ text: 'old' });
    await curl([`${api.url}/old`]);
    const pending = api.waitForRequests(2, { timeoutMs: 3000 }).catch((error: Error) => error);
    api.reset();
    api.enqueue([{ text: 'new 1' }, { text: 'new 2' }]);
    await curl([`${api.url}/new1`]);
    await curl([`${api.url}/new2`]);
    const error = await pending;
    expect(error).toBeInstanceOf(DisposedError);
    expect((error as Error).message).toBe(
      `mock server ${api.url} was reset() while waitForRequests(2) waited.`,
    );
    // a wait made after reset() counts the new log
    expect((await api.waitForRequests(2)).map((r) => r.path)).toEqual(['/new1', '/new2']);
  });
});

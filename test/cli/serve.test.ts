import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { completion, python3, runCommand, spawnTracked } from '../helpers/index.js';
import { curl, postJson } from '../helpers/server.js';
import { CLI, shimkit, shimkitOk } from './helpers.js';
import { chatText, serveDetached, serverTestDir, stdoutUntil, waitGone } from './server-helpers.js';

/** A python3 urllib client: POSTs argv[2] to OPENAI_BASE_URL + argv[1], prints {"status","body","headers"}. */
const PY_CLIENT = `
import json, os, sys, urllib.error, urllib.request
request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + sys.argv[1], data=sys.argv[2].encode(),
    headers={"content-type": "application/json", "authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
try:
    with urllib.request.urlopen(request, timeout=10) as response:
        status, body, headers = response.status, response.read(), dict(response.headers)
except urllib.error.HTTPError as error:
    status, body, headers = error.code, error.read(), dict(error.headers)
print(json.dumps({"status": status, "body": body.decode(), "headers": {k.lower(): v for k, v in headers.items()}}))
`;

describe('shimkit serve, expect, enqueue, requests, verify, stop (HT-10)', () => {
  it('HT-10 serve --detach prints the export lines and writes server.json; curl and python urllib get sse.chat text and a 429 --status; requests, verify and stop', async () => {
    const d = join(serverTestDir(), 'api');
    const served = await serveDetached(d);
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(served.env).toMatchObject({
      OPENAI_BASE_URL: `${served.url}/v1`,
      ANTHROPIC_BASE_URL: served.url,
      OPENAI_API_KEY: 'shimkit-test',
      ANTHROPIC_API_KEY: 'shimkit-test',
      SHIMKIT_SERVER_URL: served.url,
    });
    expect(served.env.NO_PROXY?.split(',')).toEqual(
      expect.arrayContaining(['127.0.0.1', 'localhost']),
    );
    const info = JSON.parse(readFileSync(join(d, 'server.json'), 'utf8'));
    expect(info).toEqual({ url: served.url, pid: served.pid, startedAt: expect.any(Number) });
    expect(served.pid).not.toBe(process.pid);
    // D is private: the dir 0700, the socket and the files 0600.
    const mode = (name: string) => (statSync(join(d, name)).mode & 0o777).toString(8);
    expect([mode('.'), mode('server.json'), mode('control.sock'), mode('server.log')]).toEqual([
      '700',
      '600',
      '600',
      '600',
    ]);
    expect(statSync(join(d, 'control.sock')).isSocket()).toBe(true);

    await shimkitOk([
      'expect',
      d,
      '--method',
      'POST',
      '--path',
      '/v1/chat/completions',
      '--sse-chat',
      'Hel',
      '--sse-chat',
      'lo',
      '--name',
      'plan',
    ]);
    await shimkitOk(['enqueue', d, '--status', '429', '--retry-after-ms', '10']);
    await shimkitOk(['enqueue', d, '--sse-chat', 'from python']);
    const viaCurl = await curl([
      '-N',
      ...postJson(`${served.env.OPENAI_BASE_URL}/chat/completions`, { model: 'm', stream: true }),
    ]);
    expect(viaCurl.code, viaCurl.stderr.toString()).toBe(0);
    expect(chatText(viaCurl.stdout.toString())).toBe('Hello');
    expect(viaCurl.stdout.toString().trimEnd().endsWith('data: [DONE]')).toBe(true);

    const env = { ...process.env, ...served.env };
    const limited = await runCommand(
      python3(),
      ['-c', PY_CLIENT, '/chat/completions', '{"stream":true}'],
      { env },
    );
    expect(limited.code, limited.stderr.toString()).toBe(0);
    const first = JSON.parse(limited.stdout.toString());
    expect(first.status).toBe(429);
    expect(first.headers).toMatchObject({ 'retry-after-ms': '10', 'retry-after': '1' });
    expect(JSON.parse(first.body).error.type).toBe('rate_limit_error');
    const streamed = await runCommand(
      python3(),
      ['-c', PY_CLIENT, '/chat/completions', '{"stream":true}'],
      { env },
    );
    const second = JSON.parse(streamed.stdout.toString());
    expect(second.status).toBe(200);
    expect(second.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(chatText(second.body)).toBe('from python');

    expect(await shimkitOk(['requests', d])).toMatch(
      /^#1 POST \/v1\/chat\/completions → 200 sse \d+ events complete \(plan\)\n#2 POST \/v1\/chat\/completions → 429 \d+ bytes complete \(fifo#1\)\n#3 POST \/v1\/chat\/completions → 200 sse \d+ events complete \(fifo#2\)\n$/,
    );
    const log = JSON.parse(await shimkitOk(['requests', d, '--json']));
    expect(log).toHaveLength(3);
    expect(log[0]).toMatchObject({
      seq: 1,
      method: 'POST',
      path: '/v1/chat/completions',
      body: '{"model":"m","stream":true}',
      json: { model: 'm', stream: true },
      bodyTruncated: false,
      claimedBy: 'plan',
      error: null,
      response: { status: 200, endedBy: 'complete' },
    });
    expect(log[1].headers.authorization).toBe('Bearer shimkit-test');
    expect(log[1].response).toMatchObject({ status: 429, events: 0 });

    expect(await shimkitOk(['verify', d])).toBe(
      `ok: mock server ${served.url}, 3 requests, every response used\n`,
    );
    expect(await shimkitOk(['stop', d])).toBe(
      `stopped: mock server ${served.url} (pid ${served.pid})\n`,
    );
    expect(existsSync(join(d, 'server.json'))).toBe(false);
    expect(existsSync(join(d, 'control.sock'))).toBe(false);
    await waitGone(served.pid, 1000); // stop returned once it was gone
  });

  it('HT-10 verify exits 1 with the report while a response is unused (--optional aside), and --strict counts unmatched requests', async () => {
    const root = serverTestDir();
    const d = join(root, 'api');
    const served = await serveDetached(d);
    await shimkitOk([
      'expect',
      d,
      '--path',
      '/v1/messages',
      '--sse-messages',
      'Hi',
      '--name',
      'greeting',
    ]);
    await shimkitOk(['enqueue', d, '--json', '{"json":{"data":[]}}', '--optional']);
    const r = await shimkit(['verify', d]);
    expect(r.code).toBe(1);
    expect(r.stdout.toString()).toBe('');
    expect(r.stderr.toString()).toContain('greeting');
    expect(r.stderr.toString()).not.toContain('fifo#1');
    const json = await shimkit(['verify', d, '--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout.toString())).toMatchObject({
      ok: false,
      url: served.url,
      requests: 0,
    });
    const sent = await curl(['-N', ...postJson(`${served.url}/v1/messages`, { stream: true })]);
    expect(sent.stdout.toString()).toContain('event: message_stop');
    await shimkitOk(['verify', d]);
    // The optional response answers the next request; one after it is unmatched:
    // a 500, and a failure of verify only under --strict.
    expect((await curl([`${served.url}/v1/models`])).stdout.toString()).toBe('{"data":[]}');
    const missed = await curl(['-w', '%{http_code}', `${served.url}/v1/models`]);
    expect(missed.stdout.toString()).toMatch(/shimkit_unmatched[\s\S]*500$/);
    await shimkitOk(['verify', d]);
    const s = join(root, 'strict');
    const strict = await serveDetached(s, ['--strict']);
    await curl([`${strict.url}/v1/models`]);
    const failed = await shimkit(['verify', s]);
    expect(failed.code).toBe(1);
    expect(failed.stderr.toString()).toContain('GET /v1/models');
    // The advice is in the CLI's words: the command that would answer it.
    expect(failed.stderr.toString()).toContain(
      `shimkit expect ${s} --method GET --path /v1/models`,
    );
    expect(await shimkitOk(['requests', s])).toMatch(
      /^#1 GET \/v1\/models → 500 \d+ bytes complete \(unmatched\)\n$/,
    );
  });

  it('HT-10 expect --match-json routes by the body; --cut-after-events cuts the stream (curl 18); --json gives a whole response', async () => {
    const d = join(serverTestDir(), 'api');
    const served = await serveDetached(d);
    await shimkitOk([
      'expect',
      d,
      '--path',
      '/v1/chat/completions',
      '--match-json',
      '{"model":"b"}',
      '--sse-chat',
      'for b',
    ]);
    await shimkitOk([
      'expect',
      d,
      '--path',
      '/v1/chat/completions',
      '--sse-chat',
      'x',
      '--sse-chat',
      'y',
      '--cut-after-events',
      '2',
    ]);
    await shimkitOk([
      'expect',
      d,
      '--path',
      '/v1/models',
      '--method',
      'GET',
      '--json',
      '{"status":201,"json":{"data":["m"]},"headers":{"x-a":"1"}}',
    ]);
    const url = `${served.url}/v1/chat/completions`;
    const cut = await curl(['-N', ...postJson(url, { model: 'a' })]);
    expect(cut.code).toBe(18); // the FIN without the last chunk
    expect(chatText(cut.stdout.toString())).toBe('x');
    expect(chatText((await curl(['-N', ...postJson(url, { model: 'b' })])).stdout.toString())).toBe(
      'for b',
    );
    const models = await curl(['-i', `${served.url}/v1/models`]);
    expect(models.stdout.toString()).toMatch(
      /^HTTP\/1\.1 201 [\s\S]*x-a: 1\r\n[\s\S]*\{"data":\["m"\]\}$/,
    );
    const log = JSON.parse(await shimkitOk(['requests', d, '--json']));
    expect(log.map((r: { claimedBy: string }) => r.claimedBy)).toEqual([
      'expect#2',
      'expect#1',
      'expect#3',
    ]);
    expect(log[0].response).toMatchObject({ events: 2, endedBy: 'cut' });
  });

  it('HT-10 a foreground serve prints the lines on stdout and, on SIGTERM, stops and removes server.json and control.sock (exit 0)', async () => {
    const d = join(serverTestDir(), 'api');
    const child = spawnTracked(process.execPath, [CLI, 'serve', '--dir', d, '--json']);
    const done = completion(child);
    const ready = JSON.parse(await stdoutUntil(child, /\n/));
    expect(ready).toMatchObject({ url: expect.stringMatching(/^http:/), pid: child.pid, dir: d });
    expect(ready.env).toMatchObject({
      SHIMKIT_SERVER_URL: ready.url,
      OPENAI_BASE_URL: `${ready.url}/v1`,
    });
    await shimkitOk(['enqueue', d, '--sse-responses', 'hi']);
    const got = await curl(['-N', '-X', 'POST', `${ready.url}/v1/responses`]);
    expect(got.stdout.toString()).toContain('event: response.completed');
    child.kill('SIGTERM');
    const exit = await done;
    // stderr has only the start notice (HT-13): a foreground serve watches no owner without --owner-pid.
    expect([exit.code, exit.signal, exit.stderr.toString()]).toEqual([
      0,
      null,
      `shimkit serve: pid ${child.pid} serves ${ready.url}; it stops with \`shimkit stop ${d}\`, or after 30m without a request or a command (--idle-timeout).\n`,
    ]);
    expect(existsSync(join(d, 'server.json'))).toBe(false);
    expect(existsSync(join(d, 'control.sock'))).toBe(false);
    expect((await curl([`${ready.url}/x`])).code).toBe(7); // nothing listens there any more
  });

  it('HT-10 removing D stops the server (checked every 500 ms); a killed server leaves a stale server.json that commands name and serve replaces', async () => {
    const root = serverTestDir();
    const d = join(root, 'api');
    const served = await serveDetached(d);
    rmSync(d, { recursive: true });
    await waitGone(served.pid, 5000);
    expect((await curl([`${served.url}/x`])).code).toBe(7);

    const again = await serveDetached(d);
    process.kill(-again.pid, 'SIGKILL');
    await waitGone(again.pid);
    const stale = await shimkit(['requests', d]);
    expect(stale.code).toBe(3);
    expect(stale.stderr.toString()).toContain(`its pid ${again.pid} no longer runs`);
    const third = await serveDetached(d);
    expect(third.pid).not.toBe(again.pid);
    await shimkitOk(['stop', d]);
  });

  it('HT-10 a control socket path longer than sun_path still works (D deep in the tree)', async () => {
    const d = join(serverTestDir(), 'a'.repeat(60), 'b'.repeat(60), 'api');
    expect(Buffer.byteLength(join(d, 'control.sock'))).toBeGreaterThan(108);
    const served = await serveDetached(d);
    await shimkitOk(['enqueue', d, '--sse-chat', 'deep']);
    expect(
      chatText(
        (await curl(['-N', '-X', 'POST', `${served.url}/v1/chat/completions`])).stdout.toString(),
      ),
    ).toBe('deep');
    expect(await shimkitOk(['requests', d])).toContain('(fifo#1)');
    await shimkitOk(['stop', d]);
    expect(existsSync(join(d, 'control.sock'))).toBe(false);
  });

  it('HT-10 a control connection that never sends its request neither blocks other commands nor holds up stop', async () => {
    const d = join(serverTestDir(), 'api');
    await serveDetached(d);
    const idle = connect(join(d, 'control.sock'));
    const closed = new Promise<void>((resolve) => idle.on('close', () => resolve()));
    idle.on('error', () => {});
    await new Promise<void>((resolve) => idle.once('connect', () => resolve()));
    await shimkitOk(['enqueue', d, '--sse-chat', 'x']);
    const started = Date.now();
    await shimkitOk(['stop', d]);
    await closed;
    expect(Date.now() - started).toBeLessThan(5000); // not the 10 s a control connection may idle
  });

  it('HT-10 bad flags and dirs: exit 2 naming the flag and the nearest one, exit 3 for no server, the log when a detached server cannot start', async () => {
    const root = serverTestDir();
    const d = join(root, 'api');
    const err = async (args: string[], code: number) => {
      const r = await shimkit(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(code);
      expect(r.stdout.toString()).toBe('');
      return r.stderr.toString();
    };
    expect(await err(['serve'], 2)).toContain('Pass --dir D');
    expect(await err(['serve', '--dir', d, '--detatch'], 2)).toContain(
      'unknown flag "--detatch". Did you mean --detach?',
    );
    expect(await err(['serve', '--dir', d, '--port', '70000'], 2)).toContain(
      '--port takes a TCP port',
    );
    expect(await err(['serve', '--dir', d, '--unmatched', 'ignore'], 2)).toContain(
      '"fail" or "echo"',
    );
    expect(await err(['serve', '--dir', d, '--strict', '--unmatched', 'echo'], 2)).toContain(
      '--strict needs --unmatched fail',
    );
    expect(await err(['requests', d], 3)).toContain(`${d} does not exist`);
    mkdirSync(d, { mode: 0o700 });
    expect(await err(['requests', d], 3)).toContain('no mock server runs in');
    expect(await err(['stop', d], 3)).toContain('nothing to stop');
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = String((taken.address() as { port: number }).port);
      const text = await err(['serve', '--dir', d, '--port', port, '--detach'], 3);
      expect(text).toContain('exited with 3 before listening');
      expect(text).toContain(join(d, 'server.log'));
      expect(text).toContain('EADDRINUSE');
    } finally {
      taken.close();
    }
    await serveDetached(d);
    expect(await err(['serve', '--dir', d], 3)).toContain('a mock server already runs in');
    expect(await err(['expect', d, '--sse-chat', 'x'], 2)).toContain('Pass --path P');
    expect(await err(['expect', d, '--path', '/v1', '--sse-chta', 'x'], 2)).toContain(
      'unknown flag "--sse-chta". Did you mean --sse-chat?',
    );
    expect(await err(['expect', d, '--path', '/v1'], 2)).toContain(
      'which response? Give one of --sse-chat TEXT',
    );
    expect(await err(['enqueue', d, '--sse-chat', 'x', '--status', '500'], 2)).toContain(
      'not --sse-chat and --status',
    );
    expect(await err(['enqueue', d, '--status', '99'], 2)).toContain('from 100 to 599');
    expect(await err(['enqueue', d, '--sse-chat', 'x', '--retry-after-ms', '5'], 2)).toContain(
      '--retry-after-ms goes with --status N',
    );
    expect(
      await err(['enqueue', d, '--sse-chat', 'x', '--cut-after-events', '1', '--cut', 'fni'], 2),
    ).toContain('Did you mean fin?');
    expect(await err(['enqueue', d, '--sse-chat', 'x', '--cut', 'rst'], 2)).toContain(
      '--cut goes with --cut-after-events N',
    );
    expect(await err(['enqueue', d, '--sse-chat', 'x', '--delay', 'soon'], 2)).toContain(
      '200, 200ms or 1.5s',
    );
    expect(await err(['enqueue', d, '--json', '{"stauts":200}'], 2)).toMatch(/stauts[\s\S]*status/);
    expect(await err(['enqueue', d, '--json', '{nope'], 2)).toContain('not valid JSON');
    expect(await err(['enqueue', d, '--stdout', 'x'], 2)).toContain('unknown flag "--stdout"');
    expect(await err(['requests', d, '--jsno'], 2)).toContain('Did you mean --json?');
    // Nothing was scripted by the refused commands.
    await shimkitOk(['verify', d]);
    writeFileSync(join(root, 'not-a-dir'), '');
    expect(await err(['serve', '--dir', join(root, 'not-a-dir')], 3)).toContain('is not a dir');
  });

  it('HT-10 --help of serve, expect, requests, stop (and the server forms of enqueue and verify); the overview lists them', async () => {
    const top = await shimkitOk(['--help']);
    for (const command of ['serve', 'expect', 'requests', 'stop']) {
      expect(top).toContain(`  ${command} `);
      const help = await shimkitOk([command, '--help']);
      expect(help, command).toMatch(new RegExp(`^Usage: shimkit ${command}`));
      expect(help, command).toMatch(/Examples?:\n {2}(\S.*)?shimkit /);
      expect(help, command).toContain('Exit codes:\n  0   ok');
    }
    expect(await shimkitOk(['expect', '--help'])).toContain('--sse-chat TEXT');
    expect(await shimkitOk(['enqueue', '--help'])).toContain("With D a mock server's dir");
    const d = join(serverTestDir(), 'api');
    await serveDetached(d);
    expect(await shimkitOk(['enqueue', d, '--help'])).toMatch(
      /^Usage: shimkit enqueue D \(--sse-chat/,
    );
    expect(await shimkitOk(['verify', d, '--help'])).toMatch(
      /^Usage: shimkit verify D \[--json\]\n\nWith D a mock server/,
    );
  });
});

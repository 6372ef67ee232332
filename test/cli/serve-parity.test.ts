import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCommand } from '../helpers/index.js';
import { curl, postJson, server } from '../helpers/server.js';
import { shimkit, shimkitOk, shimkitOnPath } from './helpers.js';
import { chatText, serveDetached, serverTestDir, waitGone } from './server-helpers.js';

const lines = (text: string) => text.split('\n').filter(Boolean);

/** `n` GETs of `url`, 16 at a time; their bodies in the order sent. */
async function getAll(url: string, n: number): Promise<string[]> {
  const bodies: string[] = new Array(n);
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      bodies[i] = await (await fetch(url)).text();
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return bodies;
}

describe('shimkit serve: an unmatched request is answered in CLI words (HT-10)', () => {
  it('HT-10 the 500 and the log entry name the shimkit expect command that would answer it, and running it does', async () => {
    const d = join(serverTestDir(), 'api dir');
    const served = await serveDetached(d);
    const missed = await curl([`${served.url}/v1/models?x=1`]);
    const message = JSON.parse(missed.stdout.toString()).error.message as string;
    const quoted = `'${d}'`;
    expect(message).toContain(
      `To answer it: shimkit expect ${quoted} --method GET --path /v1/models --sse-chat TEXT (or --status N, --json RESPONSE), or shimkit enqueue ${quoted} --sse-chat TEXT.`,
    );
    expect(message).not.toContain('api.expect');
    const [entry] = lines(await shimkitOk(['requests', d, '--jsonl'])).map((l) => JSON.parse(l));
    expect(entry.error).toBe(message);
    // A path that is not one shell word is quoted in the advice.
    const odd = await curl([`${served.url}/v1/it's%20here`]);
    expect(JSON.parse(odd.stdout.toString()).error.message).toContain(
      `--path '/v1/it'\\''s%20here'`,
    );
    // The advice, as a shell runs it, answers the request.
    const advice = /To answer it: (shimkit expect .*? --sse-chat) TEXT/.exec(message)?.[1];
    const run = await runCommand('sh', ['-c', `${advice} hello`], { env: shimkitOnPath().env });
    expect(run.code, run.stderr.toString()).toBe(0);
    expect(chatText((await curl([`${served.url}/v1/models`])).stdout.toString())).toBe('hello');
  });
});

describe('shimkit hold, release, reset, wait-requests: what the API does, from the CLI (HT-17)', () => {
  it('HT-17 hold pauses the next request that fits; release --wait blocked serves a replacement; release without one lets it go', async () => {
    const d = join(serverTestDir(), 'api');
    const served = await serveDetached(d);
    await shimkitOk(['enqueue', d, '--sse-chat', 'scripted', '--times', 'always']);
    expect(await shimkitOk(['hold', d, '--path', '/v1/chat/completions'])).toBe('hold#1\n');
    const pending = curl(['-N', ...postJson(`${served.env.OPENAI_BASE_URL}/chat/completions`, {})]);
    await shimkitOk(['release', d, '--wait', 'blocked', '--timeout', '5s', '--status', '503']);
    const replaced = await pending;
    expect(replaced.stdout.toString()).toContain('scripted 503');

    expect(await shimkitOk(['hold', d, '--name', 'mid', '--after-events', '1'])).toBe('mid\n');
    const streaming = curl([
      '-N',
      ...postJson(`${served.env.OPENAI_BASE_URL}/chat/completions`, {}),
    ]);
    await shimkitOk(['release', d, 'mid', '--wait', 'blocked']);
    expect(chatText((await streaming).stdout.toString())).toBe('scripted');

    // Nothing left to release; a name it does not have; a wait that times out: nothing released.
    const none = await shimkit(['release', d]);
    expect(none.code).toBe(3);
    expect(none.stderr.toString()).toContain(
      'no hold to release on this mock server: it has hold#1 (released), mid (released)',
    );
    const unknown = await shimkit(['release', d, 'other']);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr.toString()).toContain('no hold named "other"');
    await shimkitOk(['hold', d, '--path', '/never']);
    const late = await shimkit(['release', d, '3', '--wait', 'received', '--timeout', '200ms']);
    expect(late.code).toBe(1);
    expect(late.stderr.toString()).toContain('waitReceived() waited 200 ms');
    const taken = await shimkit(['hold', d, '--name', 'mid']);
    expect(taken.code).toBe(3);
    expect(taken.stderr.toString()).toContain('has a hold named "mid" already');
  });

  it('HT-17 reset forgets the script, the log and the holds; wait-requests waits for N requests or exits 1', async () => {
    const d = join(serverTestDir(), 'api');
    const served = await serveDetached(d);
    await shimkitOk(['enqueue', d, '--json', '{"json":{"n":1}}']);
    await shimkitOk(['hold', d, '--path', '/held']);
    expect((await curl([`${served.url}/v1/a`])).stdout.toString()).toBe('{"n":1}');
    await shimkitOk(['wait-requests', d, '1', '--timeout', '5s']);
    const short = await shimkit(['wait-requests', d, '2', '--timeout', '150ms']);
    expect(short.code).toBe(1);
    expect(short.stderr.toString()).toContain(
      'waitForRequests(2) waited 150 ms; 1 came: #1 GET /v1/a',
    );

    await shimkitOk(['playbook', d, '-'], {
      input: '{"name":"p","turns":[{"when":"hi","do":[{"says":"ok"}]}]}',
    });
    await shimkitOk(['reset', d]);
    expect(await shimkitOk(['requests', d])).toBe('');
    const gone = await shimkit(['tool-calls', d, '--playbook', 'p']);
    expect(gone.stderr.toString()).toContain('no playbook named "p" on the server');
    await shimkitOk(['verify', d]);
    expect(await shimkitOk(['hold', d])).toBe('hold#1\n'); // counted from 1 again
    await shimkitOk(['release', d]);
    const after = await curl(['-w', ' %{http_code}', `${served.url}/v1/a`]);
    expect(after.stdout.toString()).toMatch(/shimkit_unmatched.* 500$/);
    // Two waiting at once, answered as requests come.
    const waiting = [
      shimkit(['wait-requests', d, '3', '--timeout', '10s']),
      shimkit(['wait-requests', d, '2', '--timeout', '10s']),
    ];
    await getAll(`${served.url}/v1/b`, 2);
    expect((await waiting[1])?.code).toBe(0);
    await getAll(`${served.url}/v1/c`, 1);
    expect((await waiting[0])?.code).toBe(0);
    const bad = await shimkit(['wait-requests', d, 'x']);
    expect(bad.code).toBe(2);
  });
});

describe('the new commands have help (HT-17)', () => {
  it('HT-17 hold, release, reset and wait-requests --help show their options, examples and exit codes', async () => {
    const top = await shimkitOk(['--help']);
    for (const command of ['hold', 'release', 'reset', 'wait-requests']) {
      expect(top).toContain(`  ${command} `);
      const help = await shimkitOk([command, '--help']);
      expect(help, command).toMatch(new RegExp(`^Usage: shimkit ${command}`));
      expect(help, command).toMatch(/Examples?:\n {2}(\S.*)?shimkit /);
      expect(help, command).toContain('Exit codes:\n  0   ok');
    }
    expect(await shimkitOk(['requests', '--help'])).toContain('--since SEQ');
    expect(await shimkitOk(['serve', '--help'])).toContain('--log-body-budget N');
  });
});

describe('shimkit enqueue / expect --jsonl: many in one call (HT-17)', () => {
  it('HT-17 enqueue --jsonl FILE adds 600 responses in one call, in order; - reads stdin; flags do not go with it', async () => {
    const d = join(serverTestDir(), 'api');
    const served = await serveDetached(d);
    const file = join(d, '..', 'responses.jsonl');
    writeFileSync(
      file,
      `${Array.from({ length: 600 }, (_, i) => JSON.stringify({ json: { n: i + 1 } })).join('\n')}\n\n`,
    );
    await shimkitOk(['enqueue', d, '--jsonl', file]);
    await shimkitOk(['enqueue', d, '--jsonl', '-'], {
      input: '{"json":{"n":601}}\n{"status":201,"text":"last","optional":true}\n',
    });
    const bodies = await getAll(`${served.url}/v1/x`, 601);
    expect(bodies.map((b) => JSON.parse(b).n).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 601 }, (_, i) => i + 1),
    );
    await shimkitOk(['verify', d]); // the 602nd is optional
    expect(lines(await shimkitOk(['requests', d, '--since', '600']))).toHaveLength(1);

    const mixed = await shimkit(['enqueue', d, '--jsonl', file, '--times', '2']);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr.toString()).toContain('--jsonl gives whole responses');
    const broken = await shimkit(['enqueue', d, '--jsonl', '-'], { input: '{"json":1}\n{oops\n' });
    expect(broken.code).toBe(2);
    expect(broken.stderr.toString()).toContain('--jsonl (stdin), line 2 is not valid JSON');
    const invalid = await shimkit(['enqueue', d, '--jsonl', '-'], { input: '{"status":"x"}\n' });
    expect(invalid.code).toBe(2);
  });

  it('HT-17 expect --jsonl adds expectations in order; a bad one says which, and those before it stay', async () => {
    const d = join(serverTestDir(), 'api');
    const served = await serveDetached(d);
    const input = [
      { match: { path: '/v1/a' }, response: { json: { from: 'a' } }, name: 'a', times: 'always' },
      { match: { method: 'GET', path: '/v1/b' }, response: { text: 'b' }, optional: true },
    ]
      .map((l) => JSON.stringify(l))
      .join('\n');
    await shimkitOk(['expect', d, '--jsonl', '-'], { input });
    expect((await curl([`${served.url}/v1/a`])).stdout.toString()).toBe('{"from":"a"}');
    expect((await curl([`${served.url}/v1/b`])).stdout.toString()).toBe('b');
    const bad = await shimkit(['expect', d, '--jsonl', '-'], {
      input:
        '{"match":{"path":"/v1/c"},"response":{"text":"c"}}\n{"match":{"path":"/v1/d"},"response":{"status":"x"}}\n',
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr.toString()).toContain('expectation 2 of --jsonl (1 added before it)');
    expect((await curl([`${served.url}/v1/c`])).stdout.toString()).toBe('c');
    const shape = await shimkit(['expect', d, '--jsonl', '-'], { input: '{"response":{}}\n' });
    expect(shape.code).toBe(2);
    expect(shape.stderr.toString()).toContain('needs "match"');
  });
});

describe('shimkit serve --cassette: record from an upstream, then replay (HT-17)', () => {
  it('HT-17 --cassette-mode record passes to --upstream and writes the file at stop; replay answers from it without the upstream', async () => {
    const root = serverTestDir();
    const upstream = await server();
    upstream.expect({ path: '/v1/chat/completions' }, { json: { answer: 'from upstream' } });
    const file = join(root, 'chat.cassette.json');
    const rec = await serveDetached(join(root, 'rec'), [
      '--cassette',
      file,
      '--cassette-mode',
      'record',
      '--upstream',
      upstream.url,
    ]);
    const recorded = await curl(postJson(`${rec.env.OPENAI_BASE_URL}/chat/completions`, { q: 1 }));
    expect(recorded.stdout.toString()).toBe('{"answer":"from upstream"}');
    await shimkitOk(['stop', join(root, 'rec')]);
    await waitGone(rec.pid);
    expect(existsSync(file)).toBe(true);
    expect(readFileSync(file, 'utf8')).toContain('"/v1/chat/completions"');
    await upstream.dispose();

    const play = await serveDetached(join(root, 'play'), [
      '--cassette',
      file,
      '--cassette-mode',
      'replay',
      '--strict',
    ]);
    const replayed = await curl(postJson(`${play.env.OPENAI_BASE_URL}/chat/completions`, { q: 1 }));
    expect(replayed.stdout.toString()).toBe('{"answer":"from upstream"}');
    const [entry] = lines(await shimkitOk(['requests', join(root, 'play'), '--jsonl'])).map((l) =>
      JSON.parse(l),
    );
    expect(entry.claimedBy).toBe('cassette:chat.cassette.json#1');
    await shimkitOk(['verify', join(root, 'play')]);

    const stray = await shimkit([
      'serve',
      '--dir',
      join(root, 'x'),
      '--upstream',
      'http://127.0.0.1:9',
    ]);
    expect(stray.code).toBe(2);
    expect(stray.stderr.toString()).toContain('--upstream goes with --cassette FILE');
    const noUpstream = await shimkit([
      'serve',
      '--dir',
      join(root, 'y'),
      '--cassette',
      join(root, 'new.json'),
      '--cassette-mode',
      'record',
    ]);
    expect(noUpstream.code).toBe(2);
    expect(noUpstream.stderr.toString()).toContain('upstream');
  });
});

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { shimkit, shimkitOk } from './helpers.js';
import { serveDetached, serverTestDir } from './server-helpers.js';

/** POST `n` JSON bodies of about `size` bytes to `url` (16 at a time), reading each answer. */
async function post(url: string, n: number, size: number): Promise<void> {
  let next = 1;
  const worker = async () => {
    while (next <= n) {
      const i = next++;
      const response = await fetch(`${url}/v1/x`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ i, pad: 'x'.repeat(size) }),
      });
      await response.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

const lines = (text: string) => text.split('\n').filter(Boolean);

describe('shimkit requests streams the log; the daemon keeps bodies within a budget (HT-14)', () => {
  it('HT-14 requests --jsonl prints one entry per line; --since and --limit give a part; --json stays an array', async () => {
    const d = join(serverTestDir(), 'api');
    const served = await serveDetached(d, ['--unmatched', 'echo']);
    await post(served.url, 300, 100);

    const all = lines(await shimkitOk(['requests', d, '--jsonl'])).map((l) => JSON.parse(l));
    expect(all).toHaveLength(300);
    expect(all.map((r) => r.seq)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    expect(all[0]).toMatchObject({ method: 'POST', path: '/v1/x', bodyDropped: false });

    // The tail of the log: only what came after --since.
    const tail = lines(await shimkitOk(['requests', d, '--jsonl', '--since', '297']));
    expect(tail.map((l) => JSON.parse(l).seq)).toEqual([298, 299, 300]);
    const page = lines(
      await shimkitOk(['requests', d, '--jsonl', '--since', '10', '--limit', '2']),
    );
    expect(page.map((l) => JSON.parse(l).seq)).toEqual([11, 12]);
    expect(await shimkitOk(['requests', d, '--jsonl', '--since', '300'])).toBe('');

    const array = JSON.parse(await shimkitOk(['requests', d, '--json', '--since', '295']));
    expect(array.map((r: { seq: number }) => r.seq)).toEqual([296, 297, 298, 299, 300]);
    expect(JSON.parse(await shimkitOk(['requests', d, '--json', '--since', '300']))).toEqual([]);
    const text = lines(await shimkitOk(['requests', d, '--since', '299']));
    expect(text).toEqual([
      expect.stringMatching(/^#300 POST \/v1\/x → 200 \d+ bytes complete \(unmatched\)$/),
    ]);

    const bad = await shimkit(['requests', d, '--limit', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr.toString()).toContain('--limit takes a whole number from 1, got "0"');
  });

  it('HT-14 serve --log-body-budget: the oldest bodies are dropped (bodyDropped, counted on stderr), the newest kept whole', async () => {
    const d = join(serverTestDir(), 'api');
    const served = await serveDetached(d, [
      '--unmatched',
      'echo',
      '--log-body-budget',
      '8K',
      '--log-body-bytes',
      '2048',
    ]);
    await post(served.url, 40, 1000);
    await post(served.url, 1, 5000); // cut at --log-body-bytes
    const r = await shimkit(['requests', d, '--jsonl']);
    expect(r.code).toBe(0);
    const log = lines(r.stdout.toString()).map((l) => JSON.parse(l));
    expect(log).toHaveLength(41);
    const kept = log.filter((e) => !e.bodyDropped);
    const keptBytes = kept.reduce((sum, e) => sum + Buffer.byteLength(e.body), 0);
    expect(keptBytes).toBeLessThanOrEqual(8192);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.at(-1)).toMatchObject({ seq: 41, bodyTruncated: true });
    expect(kept.at(-1).bodyBytes).toBeGreaterThan(5000);
    expect(kept.at(-1).body).toHaveLength(2048);
    const dropped = log.filter((e) => e.bodyDropped);
    expect(dropped.length).toBe(41 - kept.length);
    expect(dropped[0]).toMatchObject({ seq: 1, body: '', json: null, bodyTruncated: true });
    expect(dropped[0].bodyBytes).toBeGreaterThan(1000);
    expect(r.stderr.toString()).toContain(
      `the bodies of the ${dropped.length} oldest requests were dropped`,
    );

    const bad = await shimkit(['serve', '--dir', join(d, '..', 'b'), '--log-body-budget', '1G']);
    expect(bad.code).toBe(2);
    expect(bad.stderr.toString()).toContain('--log-body-budget takes a number of bytes');
  });
});

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { shimkitOk } from './helpers.js';
import { serveDetached, serverTestDir } from './server-helpers.js';

/** POST `n` small JSON bodies to `url`, 32 at a time. */
async function post(url: string, n: number): Promise<void> {
  let next = 1;
  const worker = async () => {
    while (next <= n) {
      const i = next++;
      const response = await fetch(`${url}/v1/x`, { method: 'POST', body: `{"i":${i}}` });
      await response.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
}

describe('shimkit requests on a log of 100,000 entries (HT-14)', () => {
  it('HT-14 --since near the end prints only the tail; the whole log streams as JSON lines', async () => {
    const d = join(serverTestDir(), 'api');
    const served = await serveDetached(d, ['--unmatched', 'echo']);
    await post(served.url, 100_000);
    const tail = (await shimkitOk(['requests', d, '--jsonl', '--since', '99995']))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line).seq);
    expect(tail).toEqual([99_996, 99_997, 99_998, 99_999, 100_000]);
    const all = await shimkitOk(['requests', d, '--jsonl']);
    expect(all.split('\n').filter(Boolean)).toHaveLength(100_000);
  }, 300_000);
});

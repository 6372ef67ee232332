import { describe, expect, it } from 'vitest';
import { Mirror } from '../../src/server/mirror.js';
import type { WireEntry } from '../../src/server/protocol.js';
import { server } from '../helpers/server.js';

/** A finished (or, `running`, unfinished) entry of `bodyBytes` bytes, as the worker posts it. */
function entry(seq: number, bodyBytes: number, running = false): WireEntry {
  return {
    seq,
    method: 'POST',
    path: '/v1/chat/completions',
    query: {},
    headers: {},
    body: new Uint8Array(bodyBytes).fill(0x61),
    bodyBytes,
    receivedAt: seq,
    claimedBy: `fifo#${seq}`,
    claim: null,
    error: undefined,
    unmatched: false,
    hold: undefined,
    status: 200,
    bytesSent: 2,
    events: 0,
    endedBy: running ? undefined : 'complete',
    startedAt: seq,
    endedAt: running ? undefined : seq,
  };
}

describe('the log at 100k entries: reads do not walk it, bodies within a budget (HT-14)', () => {
  it('HT-14 the mirror counts unfinished responses as events come (what settles a read), at 100k entries', () => {
    const mirror = new Mirror();
    for (let seq = 1; seq <= 100_000; seq++) {
      mirror.apply({ type: 'entry', gen: 1, entry: entry(seq, 0, seq % 1000 === 0) });
    }
    expect(mirror.entries).toHaveLength(100_000);
    expect(mirror.unfinished).toBe(100);
    for (let seq = 1000; seq <= 100_000; seq += 1000) {
      mirror.apply({
        type: 'update',
        gen: 1,
        seq,
        patch: { endedBy: 'complete', endedAt: seq },
      });
    }
    expect(mirror.unfinished).toBe(0);
    // A later update of an ended response (a client-abort correction) does not count twice.
    mirror.apply({
      type: 'update',
      gen: 1,
      seq: 5,
      patch: { endedBy: 'client-abort', endedAt: 6 },
    });
    expect(mirror.unfinished).toBe(0);
    mirror.reset(2);
    expect(mirror.unfinished).toBe(0);
  });

  it('HT-14 past the body budget the oldest bodies are dropped (bodyDropped, counted), the newest kept', () => {
    const mirror = new Mirror(10 * 1024);
    for (let seq = 1; seq <= 100; seq++) {
      mirror.apply({ type: 'entry', gen: 1, entry: entry(seq, 1024) });
    }
    expect(mirror.bodiesDropped).toBe(90);
    const kept = mirror.entries.filter((r) => r.body.length > 0);
    expect(kept.map((r) => r.seq)).toEqual([91, 92, 93, 94, 95, 96, 97, 98, 99, 100]);
    const dropped = mirror.entries[0];
    expect(dropped?.bodyDropped).toBe(true);
    expect(dropped?.body.length).toBe(0);
    expect(dropped?.bodyBytes).toBe(1024);
    expect(mirror.entries[99]?.bodyDropped).toBeUndefined();
  });

  it('HT-14 logBodyBudgetBytes on a real server: old bodies go, json too; bodyBytes and the rest stay', async () => {
    const api = await server({ unmatched: 'echo', logBodyBudgetBytes: 2048 });
    for (let i = 1; i <= 6; i++) {
      const response = await fetch(`${api.url}/v1/x`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ i, pad: 'x'.repeat(900) }),
      });
      await response.arrayBuffer();
    }
    const log = api.requests();
    expect(log).toHaveLength(6);
    expect(log.map((r) => r.bodyDropped === true)).toEqual([true, true, true, true, false, false]);
    expect(log[0]?.json).toBeUndefined();
    expect(log[0]?.bodyBytes).toBeGreaterThan(900);
    expect(log[5]?.json).toMatchObject({ i: 6 });
    expect(api.lastRequest()?.seq).toBe(6);
  });

  it('HT-14 logBodyBudgetBytes is checked when given', async () => {
    await expect(server({ logBodyBudgetBytes: -1 })).rejects.toThrow(/logBodyBudgetBytes/);
  });
});

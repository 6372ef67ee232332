import { execFileSync } from 'node:child_process';
import { MessageChannel } from 'node:worker_threads';
import { describe, expect, it, onTestFinished } from 'vitest';
import { reply } from '../../src/index.js';
import { JournalReader, JournalWriter, journalFlags } from '../../src/internal/journal.js';
import { curl, server } from '../helpers/server.js';

/** A writer and a reader over a fresh channel, both ends closed when the test finishes. */
function journal(segmentBytes: number) {
  const { port1, port2 } = new MessageChannel();
  const flags = journalFlags();
  const records: { text: string; bytes: Buffer }[] = [];
  const reader = new JournalReader(port2, flags, (text, bytes) =>
    records.push({ text, bytes: Buffer.from(bytes) }),
  );
  // What the writer posts (bells, segments), seen on the way: the reader still gets each.
  const posted: unknown[] = [];
  const post = port1.postMessage.bind(port1);
  port1.postMessage = (message: unknown) => {
    posted.push(message);
    post(message);
  };
  const writer = new JournalWriter(port1, flags, segmentBytes);
  onTestFinished(() => {
    reader.close();
    port1.close();
  });
  return { writer, reader, records, posted, flags };
}

describe('the worker → test journal (HT-07: the log is exact when read)', () => {
  it('HT-07 records are read in order, whole, across sealed segments and a record bigger than a segment', () => {
    const { writer, reader, records } = journal(64);
    const big = Buffer.alloc(1000, 0xab);
    const sent: { text: string; bytes: Buffer }[] = [];
    for (let i = 0; i < 50; i++) {
      const bytes = i === 17 ? big : Buffer.from(`body ${i} é\u0000`);
      const text = JSON.stringify({ i, word: 'ünïcödé '.repeat(i % 4) });
      writer.append(text, bytes, false);
      sent.push({ text, bytes });
      if (i % 7 === 0) reader.read();
    }
    writer.append('no bytes', undefined, false);
    sent.push({ text: 'no bytes', bytes: Buffer.alloc(0) });
    reader.read();
    expect(records).toEqual(sent);
    // Nothing is read twice.
    reader.read();
    expect(records).toHaveLength(51);
  });

  it('HT-07 the reader is woken (a bell on the port) only for urgent records or while it watches', () => {
    const { writer, reader, records, posted } = journal(1 << 20);
    writer.append('quiet', undefined, false); // the first segment is handed over: one message
    writer.append('quiet too', undefined, false);
    expect(posted).toHaveLength(1);
    expect(posted[0]).toHaveProperty('segment');
    writer.append('urgent', undefined, true);
    writer.append('urgent again, before a read', undefined, true);
    expect(posted.slice(1)).toEqual([0]); // one bell until the reader has read
    reader.read();
    reader.watch(true);
    writer.append('watched', undefined, false);
    expect(posted.slice(2)).toEqual([0]);
    reader.read();
    reader.watch(false);
    writer.append('unwatched', undefined, false);
    expect(posted).toHaveLength(3);
    reader.read();
    expect(records.map((r) => r.text)).toEqual([
      'quiet',
      'quiet too',
      'urgent',
      'urgent again, before a read',
      'watched',
      'unwatched',
    ]);
  });

  it('HT-07 HT-14 records nothing reads are read as full segments pile up (the body budget then bounds them), not kept to the next read of state', async () => {
    const { writer, records } = journal(256);
    for (let i = 0; i < 40; i++) writer.append(`record ${i}`, Buffer.alloc(100, i), false);
    // No read(), no bell: only the segments' own messages reach this thread.
    await expect.poll(() => records.length).toBeGreaterThan(30);
    expect(records[0]?.text).toBe('record 0');
  });

  it('HT-07 a bell whose record was read before it rang (the writer publishes, then rings) does not silence the bells after it', () => {
    const { writer, reader, records, posted, flags } = journal(1 << 20);
    writer.append('read early', undefined, false);
    reader.read();
    // What the race leaves: the writer's bell marked rung (flag 1) after the reader read its record.
    Atomics.store(new Int32Array(flags), 1, 1);
    reader.read(); // what that bell's listener does: nothing to read, and the mark is cleared
    writer.append('urgent', undefined, true);
    expect(posted.filter((m) => m === 0)).toEqual([0]);
    reader.read();
    expect(records.map((r) => r.text)).toEqual(['read early', 'urgent']);
  });

  it('HT-06 HT-07 waitBlocked() after an earlier request sees the hold reached (its bell not lost to a bell read early)', async () => {
    const api = await server();
    api.expect({ path: '/other' }, { text: 'other' });
    api.expect({ path: '/stream' }, { sse: [{ data: 'a' }, { data: 'b' }, { data: 'c' }] });
    const held = api.hold({ path: '/stream' }, { afterEvents: 1 });
    expect((await curl([`${api.url}/other`])).stdout.toString()).toBe('other');
    const stream = curl(['-N', `${api.url}/stream`]);
    expect(await held.waitBlocked()).toMatchObject({ seq: 2, path: '/stream' });
    held.release();
    expect((await stream).stdout.toString()).toBe('data: a\n\ndata: b\n\ndata: c\n\n');
  });

  it('HT-07 an entry held on to is exact when read later, though no event woke the test thread', async () => {
    const api = await server();
    api.enqueue([reply.json({ n: 1 }), reply.json({ n: 2 })]);
    // The thread is blocked while the requests are served: nothing can be applied in between.
    const out = execFileSync(
      'curl',
      ['-sS', '--noproxy', '*', '--max-time', '10', `${api.url}/a`, `${api.url}/b`],
      { encoding: 'utf8' },
    );
    expect(out).toBe('{"n":1}{"n":2}');
    const [first, second] = api.requests();
    expect(first?.response.endedBy).toBe('complete');
    expect(second?.claimedBy).toBe('fifo#2');
    expect({ ...second?.response }).toMatchObject({ status: 200, endedBy: 'complete' });
  });
});

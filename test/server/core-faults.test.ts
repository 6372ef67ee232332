import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMockServer, InvalidResponseError } from '../../src/index.js';
import { runCommand, testDir } from '../helpers/index.js';
import { curl, server } from '../helpers/server.js';

const EVENTS = [1, 2, 3, 4, 5].map((n) => ({ event: 'delta', data: { n } }));
/** `event: delta\ndata: {"n":1}\n\n` … as curl prints the first `count`. */
const firstEvents = (count: number) =>
  EVENTS.slice(0, count)
    .map((e) => `event: delta\ndata: ${JSON.stringify(e.data)}\n\n`)
    .join('');

describe('faults at exact points (HT-05)', () => {
  it('HT-05 a FIN cut after event N: the client gets exactly N events, then curl exits 18 (no terminating chunk)', async () => {
    const api = await server();
    for (const n of [0, 1, 3, 5]) api.enqueue({ sse: EVENTS, cut: { afterEvents: n, how: 'fin' } });
    for (const n of [0, 1, 3, 5]) {
      const out = await curl(['-N', '-i', `${api.url}/s`]);
      expect(out.code).toBe(18);
      expect(out.stderr.toString()).toContain(
        'transfer closed with outstanding read data remaining',
      );
      const [head, body] = out.stdout.toString().split('\r\n\r\n') as [string, string];
      expect(head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(head.toLowerCase()).toContain('transfer-encoding: chunked');
      expect(body).toBe(firstEvents(n));
    }
    expect(api.requests().map((r) => [r.response.events, r.response.endedBy])).toEqual([
      [0, 'cut'],
      [1, 'cut'],
      [3, 'cut'],
      [5, 'cut'],
    ]);
  });

  it('HT-05 an RST cut after event N: the N events arrive, then curl exits 56 (connection reset)', async () => {
    const api = await server();
    api.enqueue({ sse: EVENTS, cut: { afterEvents: 2, how: 'rst' } });
    const out = await curl(['-N', `${api.url}/s`]);
    expect(out.code).toBe(56);
    expect(out.stderr.toString()).toContain('Connection reset by peer');
    expect(out.stdout.toString()).toBe(firstEvents(2));
    expect(api.requests()[0]?.response).toMatchObject({ events: 2, endedBy: 'cut' });
  });

  it('HT-05 a cut after byte N splits the event that crosses it: exactly N body bytes arrive', async () => {
    const api = await server();
    const whole = firstEvents(5);
    for (const n of [1, 30, 31, whole.length])
      api.enqueue({ sse: EVENTS, cut: { afterBytes: n, how: 'fin' } });
    api.enqueue({ json: { long: 'x'.repeat(100) }, cut: { afterBytes: 40, how: 'rst' } });
    for (const n of [1, 30, 31, whole.length]) {
      const out = await curl(['-N', `${api.url}/s`]);
      expect([out.code, out.stdout.toString()]).toEqual([18, whole.slice(0, n)]);
    }
    const json = await curl([`${api.url}/j`]);
    expect([json.code, json.stdout.toString()]).toEqual([
      56,
      `{"long":"${'x'.repeat(100)}"}`.slice(0, 40),
    ]);
    expect(api.requests().map((r) => [r.response.bytesSent, r.response.events])).toEqual([
      [1, 0],
      [30, 1],
      [31, 1],
      [whole.length, 5],
      [40, 0],
    ]);
  });

  it('HT-05 a stall keeps the connection open after event N until the client leaves, or until timeoutMs', async () => {
    const api = await server({ timeoutMs: 300 });
    api.enqueue({ sse: EVENTS, cut: { afterEvents: 1, how: 'stall' } });
    api.enqueue({ sse: EVENTS, cut: { afterEvents: 2, how: 'stall' } });
    const left = await curl(['-N', '--max-time', '0.2', `${api.url}/a`]);
    expect([left.code, left.stdout.toString()]).toEqual([28, firstEvents(1)]);
    const started = Date.now();
    const ended = await curl(['-N', `${api.url}/b`]);
    expect([ended.code, ended.stdout.toString()]).toEqual([18, firstEvents(2)]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(api.requests().map((r) => r.response.endedBy)).toEqual(['cut', 'cut']);
  });

  it('HT-05 resetBeforeHeaders resets the connection before any byte: curl exits 56 with nothing received', async () => {
    const api = await server();
    api.enqueue({ json: { never: 'sent' }, resetBeforeHeaders: true });
    const out = await curl(['-i', `${api.url}/r`]);
    expect(out.code).toBe(56);
    expect(out.stderr.toString()).toContain('Connection reset by peer');
    expect(out.stdout.length).toBe(0);
    expect(api.requests()[0]?.response).toMatchObject({
      status: undefined,
      bytesSent: 0,
      endedBy: 'cut',
    });
  });

  it('HT-05 delayMs holds the status line back; eventDelayMs spaces the events; chunks go as separate writes after their delays', async () => {
    const api = await server();
    api.enqueue({ text: 'late', delayMs: 200 });
    api.enqueue({ sse: [{ data: 'a' }, { data: 'b' }, { data: 'c' }], eventDelayMs: 100 });
    api.enqueue({
      chunks: [
        { text: 'one ' },
        { text: 'two ', delayMs: 100 },
        { base64: Buffer.from('three').toString('base64') },
      ],
    });
    const script = `
      const started = Date.now(); const times = [];
      const res = await fetch(process.argv[1]);
      const head = Date.now() - started;
      const reader = res.body.getReader(); let text = '';
      for (;;) { const { done, value } = await reader.read(); if (done) break; times.push(Date.now() - started); text += Buffer.from(value).toString(); }
      console.log(JSON.stringify({ head, times, text, te: res.headers.get('transfer-encoding') }));`;
    const run = async (path: string) => {
      const out = await runCommand(process.execPath, [
        '--input-type=module',
        '-e',
        script,
        `${api.url}${path}`,
      ]);
      return JSON.parse(out.stdout.toString()) as {
        head: number;
        times: number[];
        text: string;
        te: string | null;
      };
    };
    const delayed = await run('/d');
    expect(delayed.head).toBeGreaterThanOrEqual(195);
    expect(delayed.text).toBe('late');
    const spaced = await run('/e');
    expect(spaced.text).toBe('data: a\n\ndata: b\n\ndata: c\n\n');
    // The client saw the first event before the last (reads may merge the two late ones).
    expect((spaced.times.at(-1) as number) - (spaced.times[0] as number)).toBeGreaterThanOrEqual(
      95,
    );
    const chunked = await run('/c');
    expect([chunked.text, chunked.te]).toEqual(['one two three', 'chunked']);
    // The server's own clock: status line after the delay, last byte after the gaps.
    const [d, e, c] = api.requests().map((r) => r.response);
    expect(
      (d?.startedAt as number) - (api.requests()[0]?.receivedAt as number),
    ).toBeGreaterThanOrEqual(199);
    expect((e?.endedAt as number) - (e?.startedAt as number)).toBeGreaterThanOrEqual(199);
    expect((c?.endedAt as number) - (c?.startedAt as number)).toBeGreaterThanOrEqual(99);
    expect(api.requests().map((r) => r.response.bytesSent)).toEqual([4, 27, 13]);
  });

  it('HT-05 malformed chunked framing from wireBase64 goes out as it is: curl exits 56 on it; an empty wire is a FIN before headers (curl 52)', async () => {
    const api = await server();
    const wire =
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\nworld\r\n';
    api.enqueue({ wireBase64: Buffer.from(wire).toString('base64') });
    api.enqueue({ wireBase64: '' });
    const bad = await curl([`${api.url}/w`]);
    expect(bad.code).toBe(56);
    expect(bad.stderr.toString()).toContain('chunked-encoding');
    expect(bad.stdout.toString()).toBe('hello');
    const empty = await curl([`${api.url}/w`]);
    expect(empty.code).toBe(52);
    expect(empty.stderr.toString()).toContain('Empty reply from server');
    expect(
      api.requests().map((r) => [r.response.status, r.response.bytesSent, r.response.endedBy]),
    ).toEqual([
      [200, wire.length, 'complete'],
      [undefined, 0, 'complete'],
    ]);
  });

  it('HT-05 an rst cut is refused on a Unix socket (it needs TCP), when scripted', async () => {
    const api = await createMockServer({ listen: { path: join(testDir(), 's.sock') } });
    try {
      const rst = { sse: EVENTS, cut: { afterEvents: 1, how: 'rst' as const } };
      expect(() => api.enqueue(rst)).toThrow(InvalidResponseError);
      expect(() => api.expect({}, rst)).toThrow(
        /the response passed to expect\(\) #1: cut\.how 'rst' needs a TCP connection/,
      );
      expect(() => api.enqueue({ ...rst, cut: { afterEvents: 1, how: 'fin' } })).not.toThrow();
    } finally {
      await api.dispose();
    }
  });
});

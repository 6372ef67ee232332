import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DisposedError, InvalidOptionError, WaitTimeoutError } from '../../src/index.js';
import { spawnTracked } from '../helpers/index.js';
import { Lines } from '../helpers/lines.js';
import { curl, server } from '../helpers/server.js';

const STREAM = fileURLToPath(new URL('../fixtures/http-stream.mjs', import.meta.url));
const FORGOTTEN = fileURLToPath(new URL('../fixtures/forgotten-server.mjs', import.meta.url));
const EVENTS = ['a', 'b', 'c', 'd'].map((data) => ({ data }));

/** A streaming client in its own process; its lines, parsed. */
function client(url: string, mode?: 'keep-alive') {
  const child = spawnTracked(process.execPath, [STREAM, url, ...(mode ? [mode] : [])]);
  const lines = new Lines(child);
  return {
    exit: new Promise<void>((resolve) => child.on('close', () => resolve())),
    next: async () => JSON.parse(await lines.next()) as Record<string, unknown>,
    lines: () => lines.all.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

describe('barriers (HT-06)', () => {
  it('HT-06 hold() pauses a claimed response before its headers: waitReceived, waitBlocked, then release() lets it go', async () => {
    const api = await server();
    api.enqueue({ status: 201, text: 'after the hold' });
    const held = api.hold({ path: '/held' });
    const c = client(`${api.url}/held`);
    const received = await held.waitReceived();
    expect(received).toMatchObject({ seq: 1, path: '/held', claimedBy: 'fifo#1' });
    expect(await held.waitBlocked()).toBe(received);
    expect(received.response.status).toBeUndefined();
    expect(c.lines()).toEqual([]);
    held.release();
    await c.exit;
    expect(c.lines()).toEqual([{ status: 201 }, { chunk: 'after the hold' }, { end: true }]);
    expect(received.response).toMatchObject({ status: 201, endedBy: 'complete' });
  });

  it('HT-06 hold(match, { afterEvents }) pauses after event N was written; the client has those N; release() sends the rest', async () => {
    const api = await server();
    api.expect({ path: '/stream' }, { sse: EVENTS });
    api.expect({ path: '/other' }, { text: 'other' });
    const held = api.hold({ path: '/stream' }, { afterEvents: 2 });
    const other = await curl([`${api.url}/other`]);
    expect(other.stdout.toString()).toBe('other'); // a request the match does not fit is not held
    const c = client(`${api.url}/stream`);
    const request = await held.waitBlocked();
    expect(request).toMatchObject({ path: '/stream', claimedBy: 'expect#1' });
    expect(await c.next()).toEqual({ status: 200 });
    let got = '';
    while (got.length < 'data: a\n\ndata: b\n\n'.length) got += (await c.next()).chunk;
    expect(got).toBe('data: a\n\ndata: b\n\n');
    expect(request.response).toMatchObject({ events: 2 });
    held.release();
    await c.exit;
    const text = c
      .lines()
      .flatMap((l) => (typeof l.chunk === 'string' ? [l.chunk] : []))
      .join('');
    expect(text).toBe('data: a\n\ndata: b\n\ndata: c\n\ndata: d\n\n');
    expect(request.response).toMatchObject({ events: 4, endedBy: 'complete' });
  });

  it('HT-06 release(response) replaces the response: whole before the headers; only more body (sse, chunks) after them', async () => {
    const api = await server();
    api.enqueue([{ text: 'original' }, { sse: EVENTS }]);
    const before = api.hold({ path: '/before' });
    const after = api.hold({ path: '/after' }, { afterEvents: 1 });
    const one = client(`${api.url}/before`);
    await before.waitBlocked();
    before.release({ status: 503, json: { replaced: true } });
    await one.exit;
    expect(one.lines()).toEqual([{ status: 503 }, { chunk: '{"replaced":true}' }, { end: true }]);

    const two = client(`${api.url}/after`);
    await after.waitBlocked();
    expect(() => after.release({ status: 500, sse: [] })).toThrow(InvalidOptionError);
    expect(() => after.release({ status: 500, sse: [] })).toThrow(
      /sets `status`, but the hold is after event 1/,
    );
    after.release({ sse: [{ data: 'new' }], cut: { afterEvents: 1, how: 'fin' } });
    await two.exit;
    const text = two
      .lines()
      .flatMap((l) => (typeof l.chunk === 'string' ? [l.chunk] : []))
      .join('');
    expect(text).toBe('data: a\n\ndata: new\n\n');
    expect(two.lines().at(-1)).toEqual({ error: 'aborted' });
    expect(api.requests()[1]?.response).toMatchObject({ events: 2, endedBy: 'cut' });
  });

  it('HT-06 a release() before the request came lets it pass without pausing', async () => {
    const api = await server();
    api.enqueue({ text: 'straight through' });
    const held = api.hold();
    held.release();
    expect((await curl([`${api.url}/x`])).stdout.toString()).toBe('straight through');
    expect(held.request?.seq).toBe(1);
  });

  it("HT-06 an expectation's waitSatisfied() resolves once the last byte of its last use was written", async () => {
    const api = await server();
    const e = api.expect({ path: '/s' }, { sse: EVENTS, eventDelayMs: 30 }, { times: 2 });
    await expect(e.waitSatisfied({ timeoutMs: 50 })).rejects.toThrow(WaitTimeoutError);
    await expect(e.waitSatisfied({ timeoutMs: 50 })).rejects.toThrow(
      /expectation 'expect#1' \{ path: '\/s' \} was used 0 of 2 times; no request came/,
    );
    const clients = [client(`${api.url}/s`), client(`${api.url}/s`)];
    await e.waitSatisfied();
    for (const request of e.requests()) {
      expect(request.response).toMatchObject({ events: 4, bytesSent: 36, endedBy: 'complete' });
      expect(request.response.endedAt).toBeTypeOf('number');
    }
    await Promise.all(clients.map((c) => c.exit));
    expect(e.isSatisfied).toBe(true);
    e.assertSatisfied();
  });

  it('HT-06 waitForRequests(n) resolves with the log at n requests, and says what came when it times out', async () => {
    const api = await server();
    api.enqueue({ text: 'one' });
    await expect(api.waitForRequests(1, { timeoutMs: 50 })).rejects.toThrow(
      /waitForRequests\(1\) waited 50 ms; 0 came\./,
    );
    const waiting = api.waitForRequests(2);
    await curl([`${api.url}/a`]);
    await curl([`${api.url}/b`]);
    expect((await waiting).map((r) => r.path)).toEqual(['/a', '/b']);
    await expect(api.waitForRequests(3, { timeoutMs: 50 })).rejects.toThrow(
      /2 came: #1 GET \/a → 'fifo#1', 200, complete; #2 GET \/b → unmatched, 500, complete\./,
    );
  });

  it('HT-06 dispose() ends held requests and keep-alive connections at once, and pending waits reject with DisposedError', async () => {
    const api = await server();
    api.enqueue([{ text: 'kept alive' }, { sse: EVENTS }, { text: 'never' }]);
    const idle = client(`${api.url}/idle`, 'keep-alive');
    while (!idle.lines().some((l) => l.end)) await idle.next();
    const held = api.hold({ path: '/held' }, { afterEvents: 1 });
    const stream = client(`${api.url}/held`);
    await held.waitBlocked();
    const never = api.hold({ path: '/nothing' });
    const waits = [never.waitReceived(), api.waitForRequests(10), held.waitBlocked()];
    const settled = Promise.allSettled(waits.slice(0, 2));
    const started = Date.now();
    await api.dispose();
    expect(Date.now() - started).toBeLessThan(4500); // not a hold timeout (30 s) or the keep-alive one (5 s)
    for (const s of await settled) {
      expect(s.status).toBe('rejected');
      expect((s as PromiseRejectedResult).reason).toBeInstanceOf(DisposedError);
    }
    await expect(waits[2]).resolves.toMatchObject({ path: '/held' }); // it was met before dispose()
    await stream.exit;
    expect(stream.lines().at(-1)).toEqual({ error: 'aborted' });
    await idle.exit;
    const closed = idle.lines().find((l) => 'closed' in l)?.closed as number;
    expect(closed).toBeLessThan(4500); // not Node's 5 s keep-alive timeout
    // The server closed the held one, not the client: a cut whose error says dispose() did it.
    expect(api.requests().map((r) => [r.path, r.response.endedBy])).toEqual([
      ['/idle', 'complete'],
      ['/held', 'cut'],
    ]);
    expect(api.requests()[1]?.error).toBe(
      'shimkit: dispose() closed the connection of GET /held (request #2) while hold() #1 held it, before its response was finished.',
    );
    expect(() => api.hold()).toThrow(DisposedError);
  });

  it('HT-06 reset() forgets the script and the log; a held request ends with 504; waits on the old script reject', async () => {
    const api = await server();
    api.enqueue({ text: 'old' });
    const e = api.expect({ path: '/never' }, { text: 'x' });
    const held = api.hold();
    const c = client(`${api.url}/h`);
    await held.waitBlocked();
    const pending = e.waitSatisfied();
    api.reset();
    await expect(pending).rejects.toThrow(DisposedError);
    await expect(pending).rejects.toThrow(/was reset\(\) while/);
    await c.exit;
    expect(c.lines()[0]).toEqual({ status: 504 });
    expect(api.requests()).toEqual([]);
    expect(() => api.assertDone()).not.toThrow();
    api.enqueue({ text: 'new' });
    expect((await curl([`${api.url}/n`])).stdout.toString()).toBe('new');
    expect(api.requests().map((r) => [r.seq, r.claimedBy])).toEqual([[1, 'fifo#1']]);
    expect(e.used).toBe(0);
  });

  it("HT-06 a forgotten server keeps nothing alive: worker and ports are unref'd unless something of it is awaited", async () => {
    const child = spawnTracked(process.execPath, [FORGOTTEN]);
    const lines = new Lines(child);
    const exited = new Promise<number | null>((resolve) =>
      child.on('close', (code) => resolve(code)),
    );
    expect(JSON.parse(await lines.next())).toMatchObject({ body: 'served' });
    const deadline = new Promise<'still running'>((resolve) =>
      setTimeout(() => resolve('still running'), 5000),
    );
    expect(await Promise.race([exited, deadline])).toBe(0);
  });
});

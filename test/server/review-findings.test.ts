import { execFileSync, spawn } from 'node:child_process';
import { request } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { reply, sse } from '../../src/index.js';
import { curl, server } from '../helpers/server.js';

// Failing regression tests from the hostile review of createMockServer
// (branch server-review). Each names the SPEC line it holds the server to.

/** Send `raw` on one socket; resolve with everything read until the server closes (or `ms`). */
function rawExchange(port: number, raw: string, ms = 2000): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    socket.on('data', (d) => {
      got += d.toString('latin1');
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve(got));
    socket.write(raw);
    setTimeout(() => socket.destroy(), ms);
  });
}

describe('review findings', () => {
  it('HT-06 a hold after the headers of a json body refuses (or frames) a release with sse: the client never reads replacement bytes as the JSON body', async () => {
    const api = await server();
    api.enqueue(reply.json({ ok: true }));
    const held = api.hold({ path: '/h' }, { afterEvents: 0 });
    const body = new Promise<{ status: number; text: string; error?: string }>((resolve) => {
      const req = request(`${api.url}/h`, (res) => {
        let text = '';
        res.on('data', (d) => {
          text += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', (e) => resolve({ status: 0, text: '', error: e.message }));
      req.end();
    });
    await held.waitBlocked();
    let refused = false;
    try {
      held.release({ sse: [{ data: 'replacement event' }] });
    } catch {
      refused = true;
      held.release();
    }
    const got = await body;
    // Either release() refuses the replacement (headers with content-length 11 are out),
    // or the original body arrives; never the first 11 bytes of the replacement.
    if (!refused) expect(got.text).not.toBe('data: repla');
    expect(got.text).toBe('{"ok":true}');
  });

  it('HT-05 a fault of a pipelined second request does not cut the first response on the same connection', async () => {
    const api = await server();
    api.enqueue(
      sse.events([{ data: 'one' }, { data: 'two' }, { data: 'three' }], { eventDelayMs: 150 }),
    );
    api.enqueue(reply.json({ second: true }, { cut: { afterBytes: 3, how: 'fin' } }));
    const port = Number(new URL(api.url).port);
    const got = await rawExchange(
      port,
      'GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n',
    );
    expect(got).toContain('data: three');
    const first = api.requests()[0];
    expect(first?.response.endedBy).toBe('complete');
  });

  it('HT-05 cut.afterBytes 0 on a json body: the status line and headers are out before the FIN (curl 18, not 52)', async () => {
    const api = await server();
    api.enqueue(reply.json({ a: 1 }, { cut: { afterBytes: 0, how: 'fin' } }));
    const out = await curl(['-i', `${api.url}/x`]);
    expect(out.stdout.toString()).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(out.code).toBe(18);
  });

  it('HT-07 a client that leaves during a large json body is logged client-abort, not complete with every byte sent', async () => {
    const api = await server();
    const size = 32 * 1024 * 1024;
    api.enqueue(reply.text('y'.repeat(size)));
    const port = Number(new URL(api.url).port);
    const socket = connect(port, '127.0.0.1');
    socket.pause(); // never reads
    socket.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n');
    await api.waitForRequests(1);
    // The writer is under way (some bytes written, the rest held by backpressure) …
    await vi.waitFor(() => expect(api.requests()[0]?.response.bytesSent).toBeGreaterThan(0), {
      timeout: 10_000,
    });
    socket.destroy();
    // … and ends once the server sees the client go.
    await vi.waitFor(() => expect(api.requests()[0]?.response.endedBy).toBeDefined(), {
      timeout: 10_000,
    });
    const response = api.requests()[0]?.response;
    expect(response?.endedBy).toBe('client-abort');
    expect(response?.bytesSent).toBeLessThan(size);
  });

  it('HT-07 requests() right after execFileSync returns already shows a client that aborted mid-stream (README: exact the moment the program exits)', async () => {
    const api = await server();
    const port = new URL(api.url).port;
    const script = [
      'import socket,os',
      `s=socket.create_connection(("127.0.0.1",${port}))`,
      's.sendall(b"GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")',
      'd=b""',
      'while b"data: a" not in d: d+=s.recv(4096)',
      'os._exit(0)',
    ].join('\n');
    const seen: Array<string | undefined> = [];
    for (let i = 0; i < 15; i++) {
      api.reset();
      api.enqueue(sse.events([{ data: 'a' }, { data: 'b' }], { eventDelayMs: 200 }));
      execFileSync('python3', ['-c', script]);
      seen.push(api.requests()[0]?.response.endedBy);
    }
    expect(seen.filter((e) => e !== 'client-abort')).toEqual([]);
  });

  it('HT-12 a body over the limit gets a 413 the client can read, also from a client that sends the whole body first (python urllib)', async () => {
    const api = await server({ bodyLimitBytes: 1000 });
    const script = [
      'import urllib.request,sys',
      'try:',
      `    urllib.request.urlopen(urllib.request.Request("${api.url}/up", data=b"x"*(30*1024*1024), method="POST"))`,
      '    print("no error")',
      'except urllib.error.HTTPError as e: print("HTTP", e.code)',
      'except Exception as e: print("EXC", type(e).__name__)',
    ].join('\n');
    const out = await new Promise<string>((resolve) => {
      const child = spawn('python3', ['-c', script], { env: api.env() });
      let text = '';
      child.stdout.on('data', (d) => {
        text += d;
      });
      child.on('close', () => resolve(text.trim()));
    });
    expect(out).toBe('HTTP 413');
  });
});

import {
  type ClientRequest,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { CassetteInteraction, RecordedRequest, RecordedSseEvent } from '../cassette-format.js';
import type { WireCassette } from '../protocol.js';
import { redactHeaders, redactJson, redactQuery } from '../redact.js';
import { readSseEvent, SseSplitter } from '../sse/decode.js';
import { cutNow } from './cut.js';
import type { Exchange } from './exchange.js';
import { jsonOf, NOT_JSON, type RequestView } from './fit.js';
import { targetOf } from './intake.js';
import { serve } from './serve.js';
import { errorResponse } from './unmatched.js';

/**
 * Recording a cassette (HT-09, design §8): a request no script entry takes
 * is passed to the upstream (http or https, over keep-alive connections):
 * method, path and query, body, and the headers but the hop-by-hop ones and
 * `host`. Its answer goes to the client as it comes — status and headers
 * flushed, each chunk written on arrival with backpressure — so an SSE
 * answer reaches the client event by event. A complete answer becomes a
 * redacted interaction, posted to the test's thread (before its last byte
 * goes to the client); one the upstream failed is answered 502 (before
 * headers) or cut as the upstream cut it, and nothing is recorded for it.
 */

/** Headers of one connection only (RFC 9110 §7.6.1), never passed on nor recorded. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
]);

type Headers = Record<string, string | string[]>;

export class Recorder {
  readonly #cassette: WireCassette;
  readonly #upstream: URL;
  readonly #agent: HttpAgent;
  readonly #record: (n: number, interaction: CassetteInteraction) => void;
  readonly #open = new Set<ClientRequest>();
  #next: number;

  constructor(
    cassette: WireCassette,
    record: (n: number, interaction: CassetteInteraction) => void,
  ) {
    this.#cassette = cassette;
    this.#upstream = new URL(cassette.upstream as string);
    const https = this.#upstream.protocol === 'https:';
    this.#agent = https ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
    this.#record = record;
    this.#next = cassette.recorded + 1;
  }

  /** The number the next request passed on gets in the file, and its `claimedBy`. */
  take(): { n: number; name: string } {
    const n = this.#next++;
    return { n, name: `cassette:${this.#cassette.file}#${n}` };
  }

  /** Pass `x` on as interaction `n`; resolves when it ended, one way or another. */
  forward(x: Exchange, view: RequestView, n: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const started = Date.now();
      const up = this.#upstream;
      const headers = passedHeaders(x.req.rawHeaders, true);
      if (
        x.req.headers['content-length'] !== undefined ||
        x.req.headers['transfer-encoding'] !== undefined
      ) {
        headers['content-length'] = String(view.body.length);
      }
      const request = (up.protocol === 'https:' ? httpsRequest : httpRequest)({
        protocol: up.protocol,
        hostname: up.hostname.replace(/^\[(.*)\]$/, '$1'),
        port: up.port === '' ? undefined : Number(up.port),
        method: view.method,
        path: up.pathname.replace(/\/+$/, '') + targetOf(x.req),
        headers,
        agent: this.#agent,
      });
      this.#open.add(request);
      let stage: 'waiting' | 'streaming' | 'done' = 'waiting';
      const finish = (run?: Promise<void>) => {
        stage = 'done';
        this.#open.delete(request);
        if (run) run.then(resolve, reject);
        else resolve();
      };
      const where = `the upstream ${this.#cassette.upstream} of the cassette ${this.#cassette.path}`;
      const failed = (error: NodeJS.ErrnoException) => {
        if (stage === 'done') return;
        const before = stage === 'waiting';
        request.destroy();
        if (x.closed) return finish();
        const why =
          error.code && !error.message.includes(error.code)
            ? `${error.code}: ${error.message}`
            : error.message;
        if (before) {
          const message = `shimkit: ${where} failed for ${x.label} before it answered (${why}); answered 502, and nothing was recorded for it.`;
          return finish(serve(x, errorResponse(502, 'shimkit_upstream_failed', message), message));
        }
        const how = error.syscall === 'read' ? 'rst' : 'fin';
        const message = `shimkit: ${where} ended ${x.label} after ${x.bytesSent} bytes of its body (${why}); the client's response was cut the same way (${how}), and nothing was recorded for it.`;
        finish(cutNow(x, how, message));
      };
      x.res.once('close', () => {
        if (stage === 'done') return;
        request.destroy();
        finish();
      });
      request.on('error', failed);
      /** A callback whose throw (a header Node will not write, …) fails only this request. */
      const guard =
        <A extends unknown[]>(fn: (...args: A) => void) =>
        (...args: A) => {
          try {
            fn(...args);
          } catch (error) {
            if (stage === 'streaming' && !x.res.headersSent) stage = 'waiting';
            failed(error as NodeJS.ErrnoException);
          }
        };
      request.on(
        'response',
        guard((response: IncomingMessage) => {
          if (stage !== 'waiting') {
            response.destroy();
            return;
          }
          stage = 'streaming';
          response.on('error', failed);
          const body = relay(x, response, guard, () => {
            if (stage !== 'streaming') return;
            if (!response.complete) {
              failed(
                Object.assign(new Error('the connection ended before the response did'), {
                  code: 'ECONNRESET',
                }),
              );
              return;
            }
            const recorded = body.recorded();
            this.#record(n, {
              request: recordedRequest(view, headers),
              response: {
                status: response.statusCode ?? 0,
                headers: redactHeaders(recorded.headers),
                ...recorded.body,
              },
              durationMs: Date.now() - started,
            });
            x.end('complete');
            finish(new Promise<void>((done) => x.res.end(() => done(x.finish()))));
          });
        }),
      );
      request.end(view.body);
    });
  }

  /** dispose(): requests still upstream end, idle keep-alive connections close. */
  dispose(): void {
    for (const request of this.#open) request.destroy();
    this.#open.clear();
    this.#agent.destroy();
  }
}

/**
 * Write the upstream's status, headers and body to the client as they come,
 * counting bytes and SSE events; `ended` is called at the body's end (or
 * the connection's), every callback through `guard`. `recorded()` then
 * gives the headers and body to keep.
 */
function relay(
  x: Exchange,
  response: IncomingMessage,
  guard: <A extends unknown[]>(fn: (...args: A) => void) => (...args: A) => void,
  ended: () => void,
): {
  recorded(): { headers: Headers; body: { bodyBase64: string } | { sse: RecordedSseEvent[] } };
} {
  const status = response.statusCode ?? 502;
  const headers = passedHeaders(response.rawHeaders, false);
  const type = String(headers['content-type'] ?? '');
  const coding = String(headers['content-encoding'] ?? 'identity');
  const splitter =
    /^text\/event-stream\b/i.test(type) && /^identity$/i.test(coding)
      ? new SseSplitter()
      : undefined;
  x.patch({ status, startedAt: Date.now() });
  x.res.writeHead(status, headers as OutgoingHttpHeaders);
  x.res.flushHeaders();
  const headersAt = Date.now();
  const chunks: Buffer[] = [];
  const events: RecordedSseEvent[] = [];
  let exact = splitter !== undefined;
  response.on(
    'data',
    guard((chunk: Buffer) => {
      if (x.closed) return;
      chunks.push(chunk);
      x.bytesSent += chunk.length;
      const before = x.events;
      if (splitter) {
        const atMs = Date.now() - headersAt;
        for (const block of splitter.push(chunk)) {
          x.events++;
          const event = exact ? readSseEvent(block) : undefined;
          if (event) events.push({ ...event, atMs });
          else exact = false;
        }
      }
      x.progress();
      if (!x.write(chunk, x.events - before)) {
        response.pause();
        void x.drain().then((ok) => ok && response.resume());
      }
    }),
  );
  response.on('end', guard(ended));
  response.on('close', guard(ended));
  return {
    recorded() {
      if (exact && splitter?.endsClean()) {
        const { 'content-length': _, ...rest } = headers;
        return { headers: rest, body: { sse: events } };
      }
      return { headers, body: { bodyBase64: Buffer.concat(chunks).toString('base64') } };
    },
  };
}

/**
 * Headers from a raw list, lower-case, a repeated one as a list, without
 * hop-by-hop ones (and those `connection` names); a request's also without
 * `host` (the upstream's own goes), `content-length` (set again for the
 * body as read) and `expect` (answered here already).
 */
function passedHeaders(raw: readonly string[], request: boolean): Headers {
  const dropped = new Set(HOP_BY_HOP);
  if (request) for (const name of ['host', 'content-length', 'expect']) dropped.add(name);
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if ((raw[i] as string).toLowerCase() !== 'connection') continue;
    for (const name of (raw[i + 1] as string).split(',')) dropped.add(name.trim().toLowerCase());
  }
  const out: Headers = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    if (dropped.has(name)) continue;
    const value = raw[i + 1] as string;
    const had = out[name];
    out[name] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value];
  }
  return out;
}

/** The request as the cassette keeps it: as passed on, redacted. */
function recordedRequest(view: RequestView, headers: Headers): RecordedRequest {
  const joined: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    joined[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const recorded: RecordedRequest = {
    method: view.method.toUpperCase(),
    path: view.path,
    query: redactQuery(view.query),
    headers: redactHeaders(joined),
    bodyBase64: view.body.toString('base64'),
  };
  const json = jsonOf(view);
  if (json === NOT_JSON) return recorded;
  // A key in the body (`api_key`, `token`, … at any depth) is redacted in both forms:
  // the bytes become those of the redacted JSON (a replay compares the JSON value).
  const redacted = redactJson(json);
  recorded.json = redacted.value;
  if (redacted.changed) {
    recorded.bodyBase64 = Buffer.from(JSON.stringify(redacted.value)).toString('base64');
  }
  return recorded;
}

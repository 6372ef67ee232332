// TEMPORARY: stands in for src/server/response.ts (toWireResponse), which the
// SSE helper writes on branch server-sse; removed once that commit is picked.
import { InvalidResponseError } from '../internal/errors.js';
import type { MockServerResponse, SseEvent, WireHttpResponse } from './types.js';

const KEYS = [
  'status',
  'headers',
  'json',
  'text',
  'bodyBase64',
  'sse',
  'chunks',
  'wireBase64',
  'delayMs',
  'eventDelayMs',
  'cut',
  'resetBeforeHeaders',
  'times',
  'optional',
];

function encodeEvent(event: SseEvent): Uint8Array {
  let text = '';
  if (event.comment !== undefined) text += `: ${event.comment}\n`;
  if (event.event !== undefined) text += `event: ${event.event}\n`;
  if (event.id !== undefined) text += `id: ${event.id}\n`;
  if (event.retry !== undefined) text += `retry: ${event.retry}\n`;
  const data = typeof event.data === 'string' ? event.data : JSON.stringify(event.data);
  for (const line of data.split('\n')) text += `data: ${line}\n`;
  return Buffer.from(`${text}\n`);
}

export function toWireResponse(value: unknown, where: string): WireHttpResponse {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidResponseError(`${where}: expected a response object, got ${String(value)}.`);
  }
  const r = value as MockServerResponse;
  for (const key of Object.keys(r)) {
    if (!KEYS.includes(key)) throw new InvalidResponseError(`${where}: unknown field \`${key}\`.`);
  }
  const headers: Array<[string, string]> = [];
  for (const [name, v] of Object.entries(r.headers ?? {})) {
    for (const one of Array.isArray(v) ? v : [v]) headers.push([name.toLowerCase(), String(one)]);
  }
  const has = (name: string) => headers.some(([n]) => n === name);
  const base = {
    status: r.status ?? 200,
    headers,
    delayMs: r.delayMs ?? 0,
    cut: r.cut,
    resetBeforeHeaders: r.resetBeforeHeaders === true,
    times: r.times ?? 1,
    optional: r.optional === true,
  };
  if (r.wireBase64 !== undefined) {
    return { ...base, kind: 'wire', pieces: [Buffer.from(r.wireBase64, 'base64')], gaps: [0] };
  }
  if (r.sse !== undefined) {
    if (!has('content-type')) headers.push(['content-type', 'text/event-stream; charset=utf-8']);
    if (!has('cache-control')) headers.push(['cache-control', 'no-cache']);
    return {
      ...base,
      kind: 'sse',
      pieces: r.sse.map(encodeEvent),
      gaps: r.sse.map((_, i) => (i === 0 ? 0 : (r.eventDelayMs ?? 0))),
    };
  }
  if (r.chunks !== undefined) {
    return {
      ...base,
      kind: 'chunks',
      pieces: r.chunks.map((c) =>
        c.base64 !== undefined ? Buffer.from(c.base64, 'base64') : Buffer.from(c.text ?? ''),
      ),
      gaps: r.chunks.map((c) => c.delayMs ?? 0),
    };
  }
  let body = Buffer.alloc(0);
  if (r.json !== undefined) {
    body = Buffer.from(JSON.stringify(r.json));
    if (!has('content-type')) headers.push(['content-type', 'application/json']);
  } else if (r.text !== undefined) {
    body = Buffer.from(r.text);
    if (!has('content-type')) headers.push(['content-type', 'text/plain; charset=utf-8']);
  } else if (r.bodyBase64 !== undefined) {
    body = Buffer.from(r.bodyBase64, 'base64');
  }
  return { ...base, kind: 'body', pieces: [body], gaps: [0] };
}

import { STATUS_CODES } from 'node:http';
import { describeValue } from '../internal/describe.js';
import { InvalidOptionError } from '../internal/errors.js';
import { MAX_TIMER_MS } from '../internal/limits.js';
import { checkOptionKeys, optionError } from '../internal/options.js';
import {
  builderOptions,
  nullableString,
  type ResponseOptions,
  stringOption,
  withResponseFields,
} from './sse/options.js';
import type { MockServerResponse } from './types.js';

// reply.*: plain (non-streaming) responses, beside sse.* and under the same
// rules: plain data out, response fields passed through, checked when made.

/** Options of {@link status}; the response fields ({@link ResponseOptions}) pass through. */
export interface StatusReplyOptions extends ResponseOptions {
  /** Seconds for `retry-after`, rounded up to whole seconds (the header takes no fraction); `retry-after-ms` gets the exact value unless given. */
  retryAfter?: number;
  /** Milliseconds for `retry-after-ms` (and `retry-after` rounded up to seconds, unless given). The SDKs read this one first. */
  retryAfterMs?: number;
  /** `error.message`. @default 'shimkit: scripted <code> <reason phrase>' */
  message?: string;
  /** `error.type`. @default by status: 429 'rate_limit_error', 529 'overloaded_error', 500 'api_error', … */
  errorType?: string;
  /** `error.code`. @default null */
  errorCode?: string | null;
}

/** Options of {@link wire}: only what means something beside a whole-wire answer. */
export type WireReplyOptions = Pick<
  ResponseOptions,
  'delayMs' | 'times' | 'optional' | 'retryable'
>;

const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  408: 'timeout_error',
  409: 'conflict_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

/**
 * A JSON body (`content-type: application/json` unless set).
 * @example
 * api.expect({ path: '/v1/models' }, reply.json({ data: [] }, { headers: { 'x-request-id': 'req_1' } }));
 */
export function json(body: unknown, options?: ResponseOptions): MockServerResponse {
  const where = 'reply.json()';
  const o = builderOptions(options, [], where);
  let copy: unknown;
  try {
    copy = JSON.stringify(body);
  } catch (error) {
    throw new InvalidOptionError(
      `Expected the body of ${where} to be a JSON value; JSON.stringify failed: ${String(error)}.`,
      { cause: error },
    );
  }
  if (copy === undefined) {
    throw new InvalidOptionError(
      `Expected the body of ${where} to be a JSON value, got ${describeValue(body)}.`,
    );
  }
  return withResponseFields({ json: JSON.parse(copy as string) }, o, where);
}

/**
 * A text body (`content-type: text/plain; charset=utf-8` unless set).
 * @example
 * api.enqueue(reply.text('not found', { status: 404 }));
 */
export function text(body: string, options?: ResponseOptions): MockServerResponse {
  const where = 'reply.text()';
  const o = builderOptions(options, [], where);
  if (typeof body !== 'string')
    throw new InvalidOptionError(
      `Expected the text of ${where} to be a string, got ${describeValue(body)}.`,
    );
  return withResponseFields({ text: body }, o, where);
}

/**
 * An HTTP error both SDKs read: status `code` and the body
 * `{"type":"error","error":{"type":…,"message":…,"code":null,"param":null}}`
 * (openai takes `error.message`/`code`/`type`, Anthropic `error.type`), with
 * `retry-after` and `retry-after-ms` when asked. Below 400 the body is empty.
 * Add `headers: { 'x-should-retry': 'false' }` to stop the SDKs' retries.
 *
 * @example
 * api.enqueue([reply.status(429, { retryAfterMs: 1 }), sse.chat('ok')]); // the SDK retries once, at once
 * api.enqueue(reply.status(529, { message: 'Overloaded' }));
 */
export function status(code: number, options?: StatusReplyOptions): MockServerResponse {
  const where = typeof code === 'number' ? `reply.status(${code})` : 'reply.status()';
  const o = builderOptions(
    options,
    ['retryAfter', 'retryAfterMs', 'message', 'errorType', 'errorCode'],
    where,
  );
  if (!Number.isInteger(code) || code < 200 || code > 999) {
    const informational =
      Number.isInteger(code) && code >= 100 && code < 200
        ? ' A 1xx status is informational, not an answer: the client would wait for a final one. To send one on purpose use reply.wire().'
        : '';
    throw new InvalidOptionError(
      `Expected the status code of ${where} to be an integer from 200 to 999, got ${describeValue(code)}.${informational}`,
    );
  }
  if (o.status !== undefined) {
    throw new InvalidOptionError(
      `${where} got a \`status\` option too; the status is its first argument.`,
    );
  }
  const headers: Record<string, string | string[]> = {};
  const seconds = delay(o.retryAfter, where, 'retryAfter', 1000);
  const ms = delay(o.retryAfterMs, where, 'retryAfterMs', 1);
  if (seconds !== undefined || ms !== undefined) {
    // retry-after is whole seconds (RFC 9110 delay-seconds): a fraction rounds up.
    headers['retry-after'] = String(Math.ceil(seconds ?? (ms as number) / 1000));
    headers['retry-after-ms'] = String(ms ?? Math.round((seconds as number) * 1000));
  }
  const user = o.headers ?? {};
  for (const name of Object.keys(headers)) {
    if (Object.keys(user).some((given) => given.toLowerCase() === name)) delete headers[name];
  }
  const body =
    code >= 400
      ? {
          json: {
            type: 'error',
            error: {
              type: stringOption(
                o.errorType,
                where,
                'errorType',
                ERROR_TYPES[code] ?? (code >= 500 ? 'api_error' : 'invalid_request_error'),
              ),
              message: stringOption(
                o.message,
                where,
                'message',
                `shimkit: scripted ${code} ${STATUS_CODES[code] ?? 'status'}`,
              ),
              code: nullableString(o.errorCode, where, 'errorCode', null),
              param: null,
            },
          },
        }
      : {};
  const merged =
    Object.keys(headers).length > 0 || o.headers !== undefined
      ? { ...headers, ...(o.headers as object) }
      : undefined;
  return withResponseFields(
    { status: code, ...body },
    { ...o, status: code, headers: merged },
    where,
  );
}

/**
 * A body of exactly these bytes (a string is sent as UTF-8), no default
 * content-type.
 * @example
 * api.enqueue(reply.raw(new Uint8Array([0x1f, 0x8b]), { headers: { 'content-encoding': 'gzip' } }));
 */
export function raw(bytes: Uint8Array | string, options?: ResponseOptions): MockServerResponse {
  const where = 'reply.raw()';
  const o = builderOptions(options, [], where);
  return withResponseFields({ bodyBase64: toBase64(bytes, where) }, o, where);
}

/**
 * The whole answer as these bytes, status line and headers included (a
 * string is sent as UTF-8): for malformed framing. Nothing is added.
 * @example
 * api.enqueue(reply.wire('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n'));
 */
export function wire(bytes: Uint8Array | string, options?: WireReplyOptions): MockServerResponse {
  const where = 'reply.wire()';
  // Status, headers, body and cuts have no meaning here: the bytes are the whole answer.
  const o = checkOptionKeys(options, ['delayMs', 'times', 'optional', 'retryable'], where);
  return withResponseFields({ wireBase64: toBase64(bytes, where) }, o, where);
}

/** Plain responses: JSON, text, an HTTP error with retry hints, raw body bytes, a whole raw answer. */
export const reply = { json, text, status, raw, wire } as const;

function toBase64(bytes: unknown, where: string): string {
  if (typeof bytes === 'string') return Buffer.from(bytes, 'utf8').toString('base64');
  if (bytes instanceof Uint8Array)
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  throw new InvalidOptionError(
    `Expected the bytes of ${where} to be a Uint8Array (or Buffer) or a string, got ${describeValue(bytes)}.`,
  );
}

/** A retry hint in `unit` ms: a finite number from 0, at most a timer's limit. */
function delay(value: unknown, where: string, option: string, unit: number): number | undefined {
  if (value === undefined) return undefined;
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value < 0 ||
    value * unit > MAX_TIMER_MS
  ) {
    throw optionError(where, option, `a number from 0 to ${MAX_TIMER_MS / unit}`, value);
  }
  return value;
}

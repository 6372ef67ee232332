import { describeValue, nearest } from '../../internal/describe.js';
import { InvalidResponseError } from '../../internal/errors.js';
import type { SseEvent } from '../types.js';

// One SseEvent → its bytes on the wire (docs/design/sse-wire-formats.md):
//
//   : comment\n  event: …\n  id: …\n  retry: …\n  data: …\n (one per line)  \n
//
// The output decodes back to the same event with any decoder that follows the
// WHATWG event-stream rules (the SDKs' SSEDecoder does): a `data` string comes
// back as it was, an object as its JSON. That is why a `data` string may not
// hold a CR: decoders end a line at CR, LF and CRLF alike and join data lines
// with LF, so a CR could only come back as an LF. Send such text inside JSON
// (object data escapes it as `\r`), or as raw bytes with `chunks`.
// This file is in the worker bundle too: it imports only ground-floor helpers.

const FIELDS = ['event', 'data', 'id', 'retry', 'comment'];
const LINE_BREAK = /\r\n|\r|\n/;
const LONE_SURROGATE = /\p{Cs}/u;
const utf8 = new TextEncoder();

/**
 * The bytes of one Server-Sent Event: its `comment` lines, then `event:`,
 * `id:`, `retry:`, one `data:` line per line of `data`, then the empty line
 * that ends it. A `data` string is split on LF; any other value is sent as
 * its `JSON.stringify` (one line). `data` may be left out only for a block
 * without `event` (a comment, `id` or `retry` alone: decoders dispatch
 * nothing for it, a keep-alive).
 *
 * `where` names the event in errors, e.g. `the response passed to enqueue() #2: sse[3]`
 * (messages then say `…: sse[3].retry must be …`).
 * Throws `InvalidResponseError` for an unknown key, an `event` or `id` with a
 * line break (or an `id` with NUL), a `retry` that is not a non-negative
 * integer, a `data` string with a CR, text with a lone UTF-16 surrogate
 * (UTF-8 cannot carry it), or `data` that has no JSON form.
 *
 * @example
 * encodeSseEvent({ event: 'ping', data: { type: 'ping' } });
 * // 'event: ping\ndata: {"type":"ping"}\n\n' as UTF-8
 */
export function encodeSseEvent(event: SseEvent, where?: string): Uint8Array {
  return utf8.encode(sseEventText(event, where));
}

/** The text of {@link encodeSseEvent}, before UTF-8. */
export function sseEventText(event: SseEvent, where?: string): string {
  if (typeof event !== 'object' || event === null || Array.isArray(event)) {
    throw new InvalidResponseError(
      `Expected ${where ?? 'an SSE event'} to be an object such as { event: 'message', data: '…' }, got ${describeValue(event)}.`,
    );
  }
  for (const key of Object.keys(event)) {
    if (!FIELDS.includes(key)) {
      const guess = nearest(key, FIELDS);
      throw new InvalidResponseError(
        `Unknown key \`${key}\` in ${where ?? 'an SSE event'}.${guess ? ` Did you mean \`${guess}\`?` : ''} Valid keys: ${FIELDS.join(', ')}.`,
      );
    }
  }
  const { event: name, data, id, retry, comment } = event;
  let text = '';
  if (comment !== undefined) {
    checkText(where, 'comment', comment);
    for (const line of comment.split(LINE_BREAK)) text += `: ${line}\n`;
  }
  if (name !== undefined) {
    checkLine(where, 'event', name);
    text += `event: ${name}\n`;
  }
  if (id !== undefined) {
    checkLine(where, 'id', id);
    if (id.includes('\0')) throw fieldError(where, 'id', 'a string without NUL', id);
    text += `id: ${id}\n`;
  }
  if (retry !== undefined) {
    if (!Number.isSafeInteger(retry) || retry < 0) {
      throw fieldError(where, 'retry', 'a non-negative integer of milliseconds', retry);
    }
    text += `retry: ${retry}\n`;
  }
  if (data !== undefined) {
    for (const line of dataText(where, data).split('\n')) text += `data: ${line}\n`;
  } else if (name !== undefined || text === '') {
    throw fieldError(
      where,
      'data',
      name === undefined
        ? "given (or a `comment`, `id` or `retry`): an empty event is nothing on the wire; use data: '' for an event with empty data"
        : 'given with `event`: an event without data lines is never dispatched',
      data,
    );
  }
  return `${text}\n`;
}

function dataText(where: string | undefined, data: unknown): string {
  if (typeof data === 'string') {
    checkText(where, 'data', data);
    if (data.includes('\r')) {
      throw fieldError(
        where,
        'data',
        'a string without CR (SSE decoders read a CR as a line end, so it cannot come back as sent; put the text in object data, which JSON escapes, or send raw bytes with chunks)',
        data,
      );
    }
    return data;
  }
  let json: string | undefined;
  try {
    json = JSON.stringify(data);
  } catch (error) {
    throw new InvalidResponseError(
      `${at(where, 'data')} must be a string or a JSON value; JSON.stringify failed: ${String(error)}.`,
      { cause: error },
    );
  }
  if (json === undefined) throw fieldError(where, 'data', 'a string or a JSON value', data);
  return json;
}

/** One line of text: no CR or LF, no lone surrogate. */
function checkLine(
  where: string | undefined,
  field: string,
  value: unknown,
): asserts value is string {
  checkText(where, field, value);
  if (LINE_BREAK.test(value)) {
    throw fieldError(where, field, 'a string without CR or LF (it is one line)', value);
  }
}

function checkText(
  where: string | undefined,
  field: string,
  value: unknown,
): asserts value is string {
  if (typeof value !== 'string') throw fieldError(where, field, 'a string', value);
  const surrogate = LONE_SURROGATE.exec(value);
  if (surrogate) {
    throw fieldError(
      where,
      field,
      `well-formed UTF-16 (a lone surrogate at index ${surrogate.index} has no UTF-8 form)`,
      value,
    );
  }
}

function fieldError(
  where: string | undefined,
  field: string,
  expected: string,
  value: unknown,
): InvalidResponseError {
  return new InvalidResponseError(
    `${at(where, field)} must be ${expected}, got ${describeValue(value)}.`,
  );
}

/** `the response passed to enqueue() #2: sse[3].data`, or `the SSE event's data`. */
function at(where: string | undefined, field: string): string {
  return where === undefined ? `the SSE event's ${field}` : `${where}.${field}`;
}

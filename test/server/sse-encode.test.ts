// encodeSseEvent round-trips through a decoder written from the WHATWG
// event-stream rules (HT-02, HT-08): the SDKs' SSEDecoder follows them.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidResponseError, type SseEvent } from '../../src/index.js';
import { encodeSseEvent } from '../../src/server/sse/encode.js';

interface Decoded {
  event: string;
  data: string;
  id: string;
  retry: number | undefined;
}

/**
 * html.spec.whatwg.org "Interpreting an event stream": lines end at CRLF, LF
 * or CR; an empty line dispatches (unless no data line came); `:` lines are
 * comments; one space after the colon is dropped; data lines join with LF;
 * an `id` with NUL and a `retry` that is not all digits are ignored.
 */
function decode(text: string): Decoded[] {
  const out: Decoded[] = [];
  const lines = text.split(/\r\n|\r|\n/);
  lines.pop(); // the part after the last line end is not a line
  let event = '';
  let data = '';
  let id = '';
  let retry: number | undefined;
  for (const line of lines) {
    if (line === '') {
      if (data !== '')
        out.push({ event, data: data.endsWith('\n') ? data.slice(0, -1) : data, id, retry });
      event = '';
      data = '';
      continue;
    }
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data += `${value}\n`;
    else if (field === 'id' && !value.includes('\0')) id = value;
    else if (field === 'retry' && /^\d+$/.test(value)) retry = Number(value);
  }
  return out;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const LONE_SURROGATE = /\p{Cs}/u;
// Line ends, colons, spaces, NUL, a BOM, astral and lone-surrogate units among arbitrary code points.
const tricky = fc.string({
  unit: fc.oneof(
    fc.constantFrom('\r', '\n', '\r\n', ' ', ':', '\0', '\uFEFF', 'é', '😀', '\uD800', '\uDC00'),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  ),
  maxLength: 12,
});
const eventArb: fc.Arbitrary<SseEvent> = fc.record(
  {
    event: tricky,
    id: tricky,
    retry: fc.oneof(fc.nat(), fc.constantFrom(-1, 1.5)),
    comment: tricky,
    data: fc.oneof(tricky, tricky, fc.jsonValue(), fc.constant(undefined)),
  },
  { requiredKeys: [] },
);

/** Whether the encoder must refuse `e`, by the rules of encode.ts's TSDoc. */
function refused(e: SseEvent): boolean {
  const texts = [e.event, e.id, e.comment, typeof e.data === 'string' ? e.data : undefined];
  if (texts.some((t) => t !== undefined && LONE_SURROGATE.test(t))) return true;
  if ([e.event, e.id].some((t) => t !== undefined && /[\r\n]/.test(t))) return true;
  if (e.id?.includes('\0')) return true;
  if (e.retry !== undefined && (!Number.isInteger(e.retry) || e.retry < 0)) return true;
  if (typeof e.data === 'string' && e.data.includes('\r')) return true;
  if (e.data === undefined && (e.event !== undefined || Object.keys(e).every((k) => k === 'data')))
    return true;
  return false;
}

describe('encodeSseEvent', () => {
  it('HT-08 any event decodes back as sent (data strings with LF, unicode, empty) or is refused with a reason', () => {
    fc.assert(
      fc.property(eventArb, (e) => {
        if (refused(e)) {
          expect(() => encodeSseEvent(e)).toThrow(InvalidResponseError);
          return;
        }
        const text = utf8.decode(encodeSseEvent(e));
        const decoded = decode(text);
        if (e.data === undefined) {
          expect(decoded).toEqual([]);
          return;
        }
        expect(decoded).toEqual([
          {
            event: e.event ?? '',
            data: typeof e.data === 'string' ? e.data : JSON.stringify(e.data),
            id: e.id ?? '',
            retry: e.retry,
          },
        ]);
      }),
      { numRuns: 2000, seed: 22 },
    );
  });

  it('HT-08 a stream of encoded events decodes to the same events in order', () => {
    const plain = fc.record({
      event: fc.string({ unit: 'grapheme', maxLength: 8 }).filter((s) => !/[\r\n]/.test(s)),
      data: fc.oneof(
        fc.string({ unit: fc.constantFrom('a', '\n', ' ', ':', 'ü', '🙂'), maxLength: 10 }),
        fc.jsonValue(),
      ),
    });
    fc.assert(
      fc.property(fc.array(plain, { maxLength: 8 }), (events) => {
        const text = events.map((e) => utf8.decode(encodeSseEvent(e))).join('');
        expect(decode(text).map(({ event, data }) => ({ event, data }))).toEqual(
          events.map((e) => ({
            event: e.event,
            data: typeof e.data === 'string' ? e.data : JSON.stringify(e.data),
          })),
        );
      }),
      { numRuns: 300, seed: 22 },
    );
  });
});

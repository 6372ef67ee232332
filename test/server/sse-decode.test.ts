import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readSseEvent, SseSplitter } from '../../src/server/sse/decode.js';
import { encodeSseEvent } from '../../src/server/sse/encode.js';
import type { SseEvent } from '../../src/server/types.js';
import { cut } from '../helpers/frames.js';

/** An event encode.ts accepts: data of any text without CR (or a JSON value), the other fields one line each. */
const line = fc.string({ unit: 'grapheme' }).filter((s) => !/[\r\n]/.test(s));
const event: fc.Arbitrary<SseEvent> = fc
  .record(
    {
      event: line,
      id: line.filter((s) => !s.includes('\0')),
      retry: fc.nat(),
      comment: fc.string({ unit: 'grapheme' }).map((s) => s.replace(/\r\n?/g, '\n')),
      data: fc.oneof(
        fc.string({ unit: 'grapheme' }).filter((s) => !s.includes('\r')),
        fc.dictionary(fc.string(), fc.jsonValue()),
        fc.array(fc.jsonValue()),
      ),
    },
    { requiredKeys: ['data'] },
  )
  .filter((e) => typeof e.data !== 'string' || !/^[[{]/.test(e.data));

describe('reading an event stream back (the cassette recorder, HT-09)', () => {
  it('HT-09 events encode.ts writes come back as the same events and blocks, however the bytes are split', () => {
    fc.assert(
      fc.property(
        fc.array(event, { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (events, cuts) => {
          const encoded = events.map((e) => encodeSseEvent(e));
          const stream = Buffer.concat(encoded);
          const splitter = new SseSplitter();
          const blocks = cut(stream, cuts).flatMap((piece) => splitter.push(piece));
          expect(blocks).toEqual(encoded.map((bytes) => Buffer.from(bytes).toString('utf8')));
          expect(splitter.endsClean()).toBe(true);
          const back = blocks.map(readSseEvent);
          expect(back).toEqual(events.map((e) => JSON.parse(JSON.stringify(e))));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('HT-09 a block shimkit would write otherwise is not read (the recorder keeps such a stream as bytes); CRLF and CR line ends still split events', () => {
    for (const block of [
      'data:x\n\n',
      'data: x\r\n\r\n',
      'event: e\n\n',
      'data: a\nevent: e\n\n',
      'colour: red\ndata: x\n\n',
      ':no space\n\n',
    ]) {
      expect(readSseEvent(block), JSON.stringify(block)).toBeUndefined();
    }
    expect(readSseEvent('data: {"a":1}\n\n')).toEqual({ data: { a: 1 } });
    expect(readSseEvent('data: {"a": 1}\n\n')).toEqual({ data: '{"a": 1}' });
    expect(readSseEvent('data: [DONE]\n\n')).toEqual({ data: '[DONE]' });
    expect(readSseEvent(': ping\n\n')).toEqual({ comment: 'ping' });
    const splitter = new SseSplitter();
    expect(splitter.push(Buffer.from('data: a\r'))).toEqual([]);
    expect(splitter.push(Buffer.from('\n\r'))).toEqual([]);
    expect(splitter.push(Buffer.from('\ndata: b\r\rdata: c'))).toEqual([
      'data: a\r\n\r\n',
      'data: b\r\r',
    ]);
    expect(splitter.endsClean()).toBe(false);
    const bad = new SseSplitter();
    expect(bad.push(Uint8Array.of(0x64, 0xff, 0x0a, 0x0a))).toEqual([]);
    expect(bad.broken).toBe(true);
    expect(bad.endsClean()).toBe(false);
  });
});

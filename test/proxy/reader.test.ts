// The public frame codec: encodeFrame, FrameDecoder and createFrameReader.
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  createFrameProxy,
  createFrameReader,
  encodeFrame,
  FrameDecodeError,
  FrameDecoder,
  InvalidOptionError,
  StreamEndedError,
  WaitTimeoutError,
} from '../../src/index.js';
import { cut, frame } from '../helpers/frames.js';
import { testDir } from '../helpers/index.js';
import { client, echoServer } from '../helpers/proxy.js';

describe('PX-11 length-prefixed framings', () => {
  const FRAMINGS = ['u32be', 'u32le', 'u16be'] as const;

  it.each(FRAMINGS)(
    'PX-11 %s: encode then decode gives the frames back, split at every byte and cut anywhere',
    (framing) => {
      fc.assert(
        fc.property(
          fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 12 }),
          fc.array(fc.nat(), { maxLength: 30 }),
          (bodies, offsets) => {
            const wire = Buffer.concat(bodies.map((b) => encodeFrame(b, framing)));
            const pieces = [cut(wire, offsets), [...wire].map((byte) => Buffer.from([byte]))];
            for (const split of pieces) {
              const decoder = new FrameDecoder({ framing });
              const out = split.flatMap((piece) => decoder.push(piece));
              expect(out.map((b) => [...b])).toEqual(bodies.map((b) => [...b]));
              expect(decoder.buffered).toBe(0);
            }
          },
        ),
        { numRuns: 60 },
      );
    },
  );

  it('PX-11 the headers: u32le little-endian, u16be two bytes, and a body too long for its header is refused', () => {
    expect([...encodeFrame('ab', 'u32le')]).toEqual([2, 0, 0, 0, 0x61, 0x62]);
    expect([...encodeFrame('ab', 'u16be')]).toEqual([0, 2, 0x61, 0x62]);
    expect([...encodeFrame(Buffer.alloc(0x1234), 'u16be').subarray(0, 2)]).toEqual([0x12, 0x34]);
    expect(encodeFrame(Buffer.alloc(65_535), 'u16be')).toHaveLength(65_537);
    expect(() => encodeFrame(Buffer.alloc(65_536), 'u16be')).toThrow(
      'encodeFrame(): a body of 65536 bytes does not fit a u16be header (at most 65535).',
    );
    expect(() => new FrameDecoder({ framing: 'u16be', maxFrameBytes: 65_536 })).toThrow(
      /maxFrameBytes.*from 0 to 65535/,
    );
  });

  it.each(FRAMINGS)(
    'PX-11 PX-02 %s through the proxy: drop frame 2 c2s, duplicate frame 1 s2c, the rest intact',
    async (framing) => {
      const dir = testDir();
      const proxy = await createFrameProxy({
        listen: join(dir, 'proxy.sock'),
        upstream: await echoServer(dir),
        framing,
        faults: [
          { action: 'drop', direction: 'c2s', frame: 2 },
          { action: 'duplicate', direction: 's2c', frame: 1 },
        ],
      });
      onTestFinished(() => proxy.close());
      const socket = await client(proxy.address);
      const replies = createFrameReader(socket, { framing });
      // Written a byte at a time: the proxy reassembles headers and bodies split anywhere.
      const wire = Buffer.concat(['one', 'two', 'three'].map((t) => encodeFrame(t, framing)));
      for (const byte of wire) socket.write(Buffer.from([byte]));
      expect((await replies.waitForFrames(3)).map(String)).toEqual(['one', 'one', 'three']);
      expect(proxy.stats().faults).toEqual({ drop: 1, duplicate: 1 });
    },
  );
});

describe('encodeFrame and FrameDecoder', () => {
  it('REL-02 PX-01 encode then decode gives the frames back, however the bytes are cut', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 20 }),
        fc.array(fc.nat(), { maxLength: 30 }),
        (bodies, offsets) => {
          const wire = Buffer.concat(bodies.map((b) => encodeFrame(b)));
          const decoder = new FrameDecoder();
          const out = cut(wire, offsets).flatMap((piece) => decoder.push(piece));
          expect(out.map((b) => [...b])).toEqual(bodies.map((b) => [...b]));
          expect(decoder.buffered).toBe(0);
          expect(decoder.decoded).toBe(bodies.length);
        },
      ),
    );
  });

  it('PX-01 encodeFrame writes a 4-byte big-endian length, then the body; strings are UTF-8', () => {
    expect([...encodeFrame('ping')]).toEqual([0, 0, 0, 4, 0x70, 0x69, 0x6e, 0x67]);
    expect([...encodeFrame(new Uint8Array([1, 2]), 'u32be')]).toEqual([0, 0, 0, 2, 1, 2]);
    expect([...encodeFrame('é')]).toEqual([0, 0, 0, 2, 0xc3, 0xa9]);
    expect(encodeFrame(Buffer.alloc(0))).toEqual(Buffer.from([0, 0, 0, 0]));
    expect(() => encodeFrame('x', 'u64' as never)).toThrow(
      new InvalidOptionError(
        'Expected the `framing` argument of encodeFrame() to be one of "u32be", "u32le", "u16be", "lines", "content-length", "raw", or a Framer { decode, encode }, got "u64" (string).',
      ),
    );
    expect(() => encodeFrame(42 as never)).toThrow(
      'Expected the body passed to encodeFrame() to be a Buffer, a Uint8Array or a string, got 42 (number).',
    );
  });

  it('PX-01 the decoder holds a partial frame, says how much of it came, and does not alias the caller’s chunk', () => {
    const decoder = new FrameDecoder();
    const wire = Buffer.concat([encodeFrame('hello'), encodeFrame('')]);
    expect(decoder.push(wire.subarray(0, 2))).toEqual([]);
    expect(decoder.buffered).toBe(2);
    expect(decoder.declaredLength).toBeUndefined();
    const chunk = Buffer.from(wire.subarray(2, 7)); // the rest of the header and "hel"
    expect(decoder.push(chunk)).toEqual([]);
    chunk.fill(0); // the caller reuses its buffer
    expect(decoder.declaredLength).toBe(5);
    expect(decoder.rest()).toEqual(wire.subarray(0, 7));
    expect(decoder.buffered).toBe(7);
    const frames = decoder.push(wire.subarray(7));
    expect(frames.map(String)).toEqual(['hello', '']);
    expect(decoder.buffered).toBe(0);
    expect(decoder.rest()).toEqual(Buffer.alloc(0));
  });

  it('PX-01 a header over maxFrameBytes stops the decoder with a FrameDecodeError, on every later push too', () => {
    const decoder = new FrameDecoder({ maxFrameBytes: 8 });
    expect(decoder.push(encodeFrame('12345678')).map(String)).toEqual(['12345678']);
    const error = (() => {
      try {
        decoder.push(Buffer.from('GET / HTTP/1.1\r\n'));
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(FrameDecodeError);
    expect(error).toMatchObject({
      code: 'ERR_SHIMKIT_FRAME_DECODE',
      frame: 2,
      declaredLength: 0x47455420,
      maxFrameBytes: 8,
      message:
        'Frame 2 declares 1195725856 bytes, more than maxFrameBytes 8; decoding stopped. Check that the peer speaks this framing, or raise maxFrameBytes if such frames are legitimate.',
    });
    expect(() => decoder.push(encodeFrame('ok'))).toThrow(error as Error);
    // The default is 64 MiB, as for the proxy.
    expect(() => new FrameDecoder().push(Buffer.from([4, 0, 0, 1]))).toThrow(
      'declares 67108865 bytes, more than maxFrameBytes 67108864',
    );
  });

  it('PX-01 decoder options and chunks are checked when given', () => {
    expect(() => new FrameDecoder({ framing: 'line' as never })).toThrow(
      'Expected the `framing` option of new FrameDecoder() to be one of "u32be", "u32le", "u16be", "lines", "content-length", "raw", or a Framer { decode, encode }, got "line" (string).',
    );
    expect(() => new FrameDecoder({ maxFrameBytes: -1 })).toThrow(
      'Expected the `maxFrameBytes` option of new FrameDecoder() to be an integer from 0 to 4294967295, got -1 (number).',
    );
    expect(() => new FrameDecoder({ maxFrameByte: 1 } as never)).toThrow(
      'Unknown option `maxFrameByte` for new FrameDecoder(). Did you mean `maxFrameBytes`?',
    );
    expect(() => new FrameDecoder().push('text' as never)).toThrow(
      'Expected the chunk passed to FrameDecoder.push() to be a Buffer or a Uint8Array, got "text" (string).',
    );
  });
});

describe('createFrameReader', () => {
  it('PX-12 a reader waits for frames through a real proxy and resolves with them', async () => {
    const dir = testDir();
    await using proxy = await createFrameProxy({
      listen: join(dir, 'proxy.sock'),
      upstream: await echoServer(dir),
      faults: [{ action: 'drop', direction: 'c2s', frame: 2 }],
    });
    const socket = await client(proxy.address);
    const replies = createFrameReader(socket);
    socket.write(Buffer.concat(['one', 'two', 'three'].map((t) => encodeFrame(t))));
    const frames = await replies.waitForFrames(2);
    expect(frames.map(String)).toEqual(['one', 'three']);
    expect(replies.texts()).toEqual(['one', 'three']);
    expect(replies.frames()).not.toBe(replies.frames()); // a copy each time
    expect(await replies.waitForFrames(0)).toHaveLength(2);
    expect(replies.ended).toBe(false);
    expect(replies.error).toBeUndefined();
  });

  it('PX-09 a sever mid-frame: waitForFrames rejects at once with a StreamEndedError that shows the partial frame', async () => {
    const dir = testDir();
    await using proxy = await createFrameProxy({
      listen: join(dir, 'proxy.sock'),
      upstream: await echoServer(dir),
      faults: [{ action: 'sever-mid-frame', direction: 's2c', frame: 2, keepBytes: 3 }],
    });
    const socket = await client(proxy.address);
    const replies = createFrameReader(socket);
    socket.write(Buffer.concat([encodeFrame('first'), encodeFrame('second')]));
    const error = await replies.waitForFrames(2, { timeoutMs: 30_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StreamEndedError);
    expect(error).toMatchObject({ code: 'ERR_SHIMKIT_STREAM_ENDED', received: 1, expected: 2 });
    expect((error as Error).message).toMatch(
      /^FrameReader: the stream (ended|failed \(.+\)) after 1 frame and 7 bytes of an unfinished one \(its header declares 6 bytes\), while waiting for 2\. The peer closed its side before sending them/,
    );
    expect(replies.texts()).toEqual(['first']);
    expect(replies.rest()).toEqual(encodeFrame('second').subarray(0, 7));
    expect(replies.ended).toBe(true);
    await expect(replies.waitForEnd()).resolves.toBeUndefined();
  });

  it('PX-12 waitForEnd resolves when the peer closes; waits time out with a WaitTimeoutError that counts in words', async () => {
    const stream = new PassThrough();
    const reader = createFrameReader(stream);
    stream.write(Buffer.concat([frame('a'), frame('bcd').subarray(0, 5)]));
    await expect(reader.waitForFrames(1)).resolves.toHaveLength(1);
    await expect(reader.waitForFrames(2, { timeoutMs: 20 })).rejects.toThrow(
      new WaitTimeoutError(
        'FrameReader: waited 20 ms for 2 frames; got 1 frame and 5 bytes of an unfinished one (its header declares 3 bytes).',
      ),
    );
    await expect(reader.waitForEnd({ timeoutMs: 20 })).rejects.toThrow(
      'FrameReader: waited 20 ms for the stream to end; it is still open after 1 frame and 5 bytes of an unfinished one (its header declares 3 bytes).',
    );
    const ended = reader.waitForEnd();
    stream.end();
    stream.resume();
    await ended;
    expect(reader.ended).toBe(true);
  });

  it('PX-01 a reader whose stream is out of step rejects its waits with the FrameDecodeError', async () => {
    const stream = new PassThrough();
    const reader = createFrameReader(stream, { maxFrameBytes: 1024 });
    const waiting = reader.waitForFrames(1);
    stream.write('{"jsonrpc":"2.0"}\n');
    await expect(waiting).rejects.toThrow(FrameDecodeError);
    await expect(reader.waitForFrames(1)).rejects.toThrow(
      'Frame 1 declares 2065853043 bytes, more than maxFrameBytes 1024',
    );
    expect(reader.error).toBeInstanceOf(FrameDecodeError);
  });

  it('PX-12 reader arguments are checked when given, naming the call', async () => {
    const stream = new PassThrough();
    expect(() => createFrameReader(undefined as never)).toThrow(
      'Expected the stream passed to createFrameReader() to be a readable stream such as a net.Socket, got undefined.',
    );
    expect(() => createFrameReader(stream, { framing: 'u64' as never })).toThrow(
      'Expected the `framing` option of createFrameReader() to be one of "u32be", "u32le", "u16be", "lines", "content-length", "raw", or a Framer { decode, encode }, got "u64" (string).',
    );
    expect(() => createFrameReader(stream, { maxFrameBytes: 1.5 })).toThrow(
      'Expected the `maxFrameBytes` option of createFrameReader() to be an integer from 0 to 4294967295, got 1.5 (number).',
    );
    expect(() => createFrameReader(stream, { framming: 'u32be' } as never)).toThrow(
      'Unknown option `framming` for createFrameReader(). Did you mean `framing`?',
    );
    const reader = createFrameReader(stream);
    await expect(reader.waitForFrames(-1)).rejects.toThrow(
      'Expected the frame count of reader.waitForFrames() to be an integer >= 0, got -1 (number).',
    );
    await expect(reader.waitForFrames(1, { timeoutMs: 'soon' as never })).rejects.toThrow(
      'Expected the `timeoutMs` option of reader.waitForFrames() to be an integer of milliseconds up to',
    );
    await expect(reader.waitForEnd({ timeout: 1 } as never)).rejects.toThrow(
      'Unknown option `timeout` for reader.waitForEnd(). Did you mean `timeoutMs`?',
    );
  });
});

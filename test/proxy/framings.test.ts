// PX-11: the framings found by looking at the bytes (lines, content-length,
// raw, a custom Framer), through the codec and through the real proxy.
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  createFrameProxy,
  createFrameReader,
  encodeFrame,
  FrameDecodeError,
  FrameDecoder,
  type FrameMalformedError,
  type FrameReader,
  type Framer,
  type FrameTooLargeError,
  InvalidOptionError,
} from '../../src/index.js';
import { cut } from '../helpers/frames.js';
import { testDir } from '../helpers/index.js';
import { client, echoServer } from '../helpers/proxy.js';

/** The TSDoc example of `Framer`: a 1-byte length, then the body. */
const u8: Framer = {
  name: 'u8',
  decode(buffer) {
    const frames: Buffer[] = [];
    let at = 0;
    while (at < buffer.length && at + 1 + (buffer[at] as number) <= buffer.length) {
      frames.push(buffer.subarray(at + 1, at + 1 + (buffer[at] as number)));
      at += 1 + (buffer[at] as number);
    }
    return { frames, rest: buffer.subarray(at) };
  },
  encode: (frame) => Buffer.concat([Buffer.from([frame.length]), frame]),
};

const byteAtATime = (wire: Buffer) => [...wire].map((byte) => Buffer.from([byte]));

/** Bodies a line can carry: no LF, and no CR at the end (it would be read as a CR LF ending). */
const lineBody = fc
  .uint8Array({ maxLength: 200 })
  .map((bytes) => Buffer.from(bytes.map((b) => (b === 10 ? 32 : b))))
  .filter((body) => body[body.length - 1] !== 13);

const CASES = [
  { framing: 'lines' as const, body: lineBody },
  { framing: 'content-length' as const, body: fc.uint8Array({ maxLength: 300 }).map(Buffer.from) },
  { framing: u8, body: fc.uint8Array({ maxLength: 255 }).map(Buffer.from) },
];
const nameOf = (framing: (typeof CASES)[number]['framing']) =>
  typeof framing === 'string' ? framing : 'a custom Framer';

describe('PX-11 framings found by looking at the bytes', () => {
  it.each(CASES.map((c) => [nameOf(c.framing), c] as const))(
    'PX-11 REL-02 %s: encode then decode gives the frames back, split at every byte and cut anywhere',
    (_name, { framing, body }) => {
      fc.assert(
        fc.property(
          fc.array(body, { maxLength: 12 }),
          fc.array(fc.nat(), { maxLength: 30 }),
          (bodies, offsets) => {
            const wire = Buffer.concat(bodies.map((b) => encodeFrame(b, framing)));
            for (const split of [cut(wire, offsets), byteAtATime(wire)]) {
              const decoder = new FrameDecoder({ framing });
              const out = split.flatMap((piece) => decoder.push(piece));
              expect(out.map((b) => [...b])).toEqual(bodies.map((b) => [...b]));
              expect(decoder.buffered).toBe(0);
              expect(decoder.decoded).toBe(bodies.length);
            }
          },
        ),
        { numRuns: 60 },
      );
    },
  );

  it('PX-11 lines: LF and CR LF endings, the body without them; a body with a newline is refused', () => {
    expect(encodeFrame('{"id":1}', 'lines').toString()).toBe('{"id":1}\n');
    const decoder = new FrameDecoder({ framing: 'lines' });
    expect(decoder.push(Buffer.from('a\r\nb\n\nc\r')).map(String)).toEqual(['a', 'b', '']);
    expect(decoder.buffered).toBe(2); // "c\r": the CR may start a CR LF
    expect(decoder.push(Buffer.from('\n')).map(String)).toEqual(['c']);
    expect(() => encodeFrame('a\nb', 'lines')).toThrow(
      'A lines frame cannot hold a newline (byte 10 at offset 1): it would be read as two frames. Escape it (JSON.stringify does), or use another framing.',
    );
    // A line longer than maxFrameBytes stops decoding, before its end arrives.
    const short = new FrameDecoder({ framing: 'lines', maxFrameBytes: 4 });
    expect(short.push(Buffer.from('abcd\n')).map(String)).toEqual(['abcd']);
    expect(() => short.push(Buffer.from('abcdefgh'))).toThrow(
      'Frame 2 has 8 bytes and no end yet, more than maxFrameBytes 4; decoding stopped.',
    );
  });

  it('PX-11 content-length: other headers, any case, split headers; a block without the header is refused', () => {
    expect(encodeFrame('{}', 'content-length').toString()).toBe('Content-Length: 2\r\n\r\n{}');
    const decoder = new FrameDecoder({ framing: 'content-length' });
    const wire = Buffer.from(
      'Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length:3\r\n\r\nabcCONTENT-LENGTH: 0\r\n\r\n',
    );
    expect(
      byteAtATime(wire)
        .flatMap((b) => decoder.push(b))
        .map(String),
    ).toEqual(['abc', '']);
    const bad = new FrameDecoder({ framing: 'content-length' });
    let error: unknown;
    try {
      bad.push(Buffer.from('Content-Type: x\r\n\r\n{}'));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(FrameDecodeError);
    expect((error as FrameDecodeError).message).toBe(
      'Frame 1 cannot be read as content-length: a header block without a Content-Length header: "Content-Type: x"; decoding stopped. Check that the peer speaks this framing.',
    );
    expect(() => bad.push(Buffer.from('more'))).toThrow(error as Error); // and again on every later call
    const huge = new FrameDecoder({ framing: 'content-length', maxFrameBytes: 10 });
    expect(() => huge.push(Buffer.from('Content-Length: 11\r\n\r\n'))).toThrow(
      'Frame 1 declares 11 bytes, more than maxFrameBytes 10;',
    );
    expect(huge.declaredLength).toBeUndefined();
    const partial = new FrameDecoder({ framing: 'content-length' });
    partial.push(Buffer.from('Content-Length: 5\r\n\r\nab'));
    expect(partial.declaredLength).toBe(5);
    expect(partial.rest().toString()).toBe('Content-Length: 5\r\n\r\nab');
  });

  it('PX-11 raw: each chunk is a frame; a custom framer whose encode does not match its decode is refused', () => {
    const decoder = new FrameDecoder({ framing: 'raw' });
    expect(decoder.push(Buffer.from('abc')).map(String)).toEqual(['abc']);
    expect(decoder.push(Buffer.alloc(0))).toEqual([]);
    expect(encodeFrame('abc', 'raw').toString()).toBe('abc');
    const sloppy: Framer = { ...u8, name: 'sloppy', encode: (frame) => frame };
    expect(() => new FrameDecoder({ framing: sloppy }).push(Buffer.from([1, 65]))).toThrow(
      "Frame 1 cannot be read as sloppy: the sloppy framer's decode() read 2 bytes for 1 frame(s), but encode() gives 1 bytes for them; encode(frame) must give back the bytes decode() read;",
    );
    expect(() => new FrameDecoder({ framing: { decode: () => [] } as never })).toThrow(
      InvalidOptionError,
    );
  });
});

/**
 * A proxy with `faults` in front of an echo server that also reads what it
 * gets in `framing`; a client writes 'one', 'two', 'three' a byte at a time.
 */
async function echoThrough(framing: Framer | 'lines' | 'content-length', faults: unknown) {
  const dir = testDir();
  const sockets: Socket[] = [];
  let upstream: (reader: FrameReader) => void = () => {};
  const seen = new Promise<FrameReader>((resolve) => {
    upstream = resolve;
  });
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => {}); // the proxy may sever it mid-echo
    upstream(createFrameReader(socket, { framing }));
    socket.pipe(socket);
  });
  const path = join(dir, 'server.sock');
  await new Promise<void>((resolve) => server.listen(path, resolve));
  onTestFinished(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  const proxy = await createFrameProxy({
    listen: join(dir, 'proxy.sock'),
    upstream: path,
    framing,
    faults: faults as never,
  });
  onTestFinished(() => proxy.close());
  const socket = await client(proxy.address);
  const replies = createFrameReader(socket, { framing });
  const wire = Buffer.concat(['one', 'two', 'three'].map((t) => encodeFrame(t, framing)));
  for (const byte of wire) socket.write(Buffer.from([byte]));
  return { proxy, replies, upstream: seen };
}

const ACTIONS: Array<[string, Record<string, unknown>, string[]]> = [
  ['drop', {}, ['one', 'three']],
  ['duplicate', {}, ['one', 'two', 'two', 'three']],
  ['delay', { delayMs: 30 }, ['one', 'two', 'three']],
  ['truncate', { keepBytes: 1 }, ['one', 't', 'three']],
  ['reorder', {}, ['one', 'three', 'two']],
];

describe('PX-11 PX-02 faults work the same on every framing, through the proxy', () => {
  const framings = CASES.map((c) => c.framing);
  for (const framing of framings) {
    it.each(ACTIONS)(
      `PX-11 PX-02 ${nameOf(framing)}: %s c2s frame 2, bytes written one at a time`,
      async (action, extra, expected) => {
        const { proxy, replies } = await echoThrough(framing, [
          { action, direction: 'c2s', frame: 2, ...extra },
        ]);
        await replies.waitForFrames(expected.length);
        await proxy.waitForFrames('s2c', expected.length);
        expect(replies.texts()).toEqual(expected);
        expect(proxy.stats().faults).toEqual({ [action]: 1 });
        expect(proxy.stats().c2s.frames).toBe(expected.length);
      },
    );

    it(`PX-11 PX-02 ${nameOf(framing)}: corrupt flips body bits only; sever-after and sever-mid-frame close on cue`, async () => {
      const corrupt = await echoThrough(framing, [
        { action: 'corrupt', direction: 'c2s', frame: 2, bits: 3 },
      ]);
      const texts = (await corrupt.replies.waitForFrames(3)).map((b) => b.toString('latin1'));
      expect(texts[0]).toBe('one');
      expect(texts[1]).toHaveLength(3);
      expect(texts[1]).not.toBe('two');
      expect(texts[2]).toBe('three');

      const after = await echoThrough(framing, [
        { action: 'sever-after', direction: 'c2s', frame: 2 },
      ]);
      const afterServer = await after.upstream;
      await afterServer.waitForEnd();
      await after.replies.waitForEnd();
      expect(afterServer.texts()).toEqual(['one', 'two']);
      expect(afterServer.rest()).toHaveLength(0);

      const mid = await echoThrough(framing, [
        { action: 'sever-mid-frame', direction: 'c2s', frame: 2, keepBytes: 2 },
      ]);
      const midServer = await mid.upstream;
      await midServer.waitForEnd();
      await mid.replies.waitForEnd();
      expect(midServer.texts()).toEqual(['one']);
      // What was let through is the frame's start: its header (if any) and 2 body bytes.
      const two = encodeFrame('two', framing);
      const ending = framing === 'lines' ? 2 : 1; // "o\n", or "o"
      expect([...midServer.rest()]).toEqual([...two.subarray(0, two.length - ending)]);
      expect(mid.proxy.stats().faults).toEqual({ 'sever-mid-frame': 1 });
    });
  }

  it('PX-11 PX-02 lines: corrupt never makes a newline, even in a body of bytes one flip away from one', async () => {
    // 0x0B and 0x0E are one bit from LF (0x0A) and CR (0x0D), 0x08 and 0x02 from LF too.
    const body = Buffer.from([0x0b, 0x0e, 0x08, 0x02, 0x0b]);
    const dir = testDir();
    const proxy = await createFrameProxy({
      listen: join(dir, 'proxy.sock'),
      upstream: await echoServer(dir),
      framing: 'lines',
      faults: [{ action: 'corrupt', direction: 'c2s', bits: 8 }],
    });
    onTestFinished(() => proxy.close());
    const socket = await client(proxy.address);
    const replies = createFrameReader(socket, { framing: 'lines' });
    for (let i = 0; i < 20; i++) socket.write(encodeFrame(body, 'lines'));
    const frames = await replies.waitForFrames(20);
    expect(frames.every((f) => f.length === body.length && !f.includes(10))).toBe(true);
    expect(frames.some((f) => !f.equals(body))).toBe(true);
  });

  it('PX-11 PX-01 a line longer than maxFrameBytes, or a header block without Content-Length, closes that connection with a clear error', async () => {
    const dir = testDir();
    const upstream = await echoServer(dir);
    const lines = await createFrameProxy({
      listen: join(dir, 'lines.sock'),
      upstream,
      framing: 'lines',
      maxFrameBytes: 16,
    });
    onTestFinished(() => lines.close());
    const a = await client(lines.address);
    const aReplies = createFrameReader(a, { framing: 'lines' });
    a.write('ok\n');
    await aReplies.waitForFrames(1);
    a.write('x'.repeat(100));
    await aReplies.waitForEnd();
    expect(aReplies.texts()).toEqual(['ok']);
    const [tooLarge] = lines.errors() as FrameTooLargeError[];
    expect(tooLarge?.message).toMatch(
      /^Frame 2 \(c2s\) on proxy connection 1 has \d+ bytes and no end yet, more than maxFrameBytes 16; the connection was closed\./,
    );
    expect(tooLarge?.atLeast).toBe(true);

    const headers = await createFrameProxy({
      listen: join(dir, 'cl.sock'),
      upstream,
      framing: 'content-length',
    });
    onTestFinished(() => headers.close());
    const b = await client(headers.address);
    const bReplies = createFrameReader(b, { framing: 'content-length' });
    b.write('Content-Length: 2\r\n\r\nok');
    await bReplies.waitForFrames(1);
    b.write('Content-Lenght: 2\r\n\r\nno');
    await bReplies.waitForEnd();
    expect(bReplies.texts()).toEqual(['ok']);
    const [malformed] = headers.errors() as FrameMalformedError[];
    expect(malformed?.name).toBe('FrameMalformedError');
    expect(malformed?.message).toBe(
      'Frame 2 (c2s) on proxy connection 1 cannot be read as content-length: a header block without a Content-Length header: "Content-Lenght: 2"; the connection was closed. Check that both peers speak this framing.',
    );
    // Other connections carry on.
    const c = await client(headers.address);
    const cReplies = createFrameReader(c, { framing: 'content-length' });
    c.write(encodeFrame('still', 'content-length'));
    expect((await cReplies.waitForFrames(1)).map(String)).toEqual(['still']);
  });

  it('PX-11 PX-02 raw: each chunk as read is a frame; faults hit chunks', async () => {
    const dir = testDir();
    const proxy = await createFrameProxy({
      listen: join(dir, 'proxy.sock'),
      upstream: await echoServer(dir),
      framing: 'raw',
      faults: [{ action: 'drop', direction: 'c2s', frame: 2 }],
    });
    onTestFinished(() => proxy.close());
    const socket = await client(proxy.address);
    const replies = createFrameReader(socket, { framing: 'raw' });
    const received = () => Buffer.concat(replies.frames()).toString();
    // One chunk at a time: each is read, and counted, before the next is written.
    socket.write('one');
    await proxy.waitForFrames('s2c', 1);
    socket.write('two');
    await expect.poll(() => proxy.stats().faults.drop, { timeout: 4000 }).toBe(1);
    socket.write('three');
    await proxy.waitForFrames('s2c', 2);
    await expect.poll(received, { timeout: 4000 }).toBe('onethree');
    expect(proxy.stats().c2s).toEqual({ frames: 2, bytes: 8 });
  });
});

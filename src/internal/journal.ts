import { type MessagePort, receiveMessageOnPort } from 'node:worker_threads';

/**
 * A journal in shared memory from one thread to another (the mock server's
 * log, decision 009 "As built"). The writer appends records — a text and
 * some bytes — to SharedArrayBuffer segments; the reader reads them
 * synchronously whenever it wants, with no message and no wake-up of its
 * thread per record. A record can be read as soon as `append()` returned:
 * its bytes are written before the segment's tail is published with an
 * atomic store, and the reader loads the tail atomically before reading.
 *
 * The reader's thread is woken — a bell, one small message on a
 * MessagePort — only while it watches (`watch(true)`: something is
 * awaited) and for a record marked urgent; bells are coalesced: one rings
 * until the reader has read. A new segment is handed over on the same port
 * (taken, not read, when it arrives: unread records stay bytes).
 *
 * Why not a message per record: on a loaded 2-core machine the wake-up a
 * `postMessage` causes took 20–40 µs of the writer's time and a core from
 * whoever waited for the byte written next (bench: server.json).
 */

/** The shared flags (an Int32Array over 8 bytes): whether the reader watches, whether a bell rang. */
const WATCH = 0;
const RUNG = 1;
const FLAG_BYTES = 8;

/** A segment starts with its tail (bytes used, header included) and whether it is sealed. */
const TAIL = 0;
const SEALED = 1;
const HEAD_BYTES = 8;
/** A record: text length, bytes length (u32 LE each), the text (UTF-8), the bytes. */
const RECORD_HEAD = 8;

/** A new segment's size, unless a record needs more. */
export const SEGMENT_BYTES = 1024 * 1024;

/** Writer → reader, on the port: a bell (read), or the next segment. */
type JournalMessage = 0 | { segment: SharedArrayBuffer };

interface Segment {
  head: Int32Array;
  buf: Buffer;
  /** The writer's own copy of the tail. */
  tail: number;
}

function segmentOf(sab: SharedArrayBuffer): Segment {
  return { head: new Int32Array(sab, 0, 2), buf: Buffer.from(sab), tail: HEAD_BYTES };
}

/** The flags both ends share; made by the reader's side and given to the writer. */
export function journalFlags(): SharedArrayBuffer {
  return new SharedArrayBuffer(FLAG_BYTES);
}

export class JournalWriter {
  readonly #port: MessagePort;
  readonly #flags: Int32Array;
  readonly #segmentBytes: number;
  #segment: Segment | undefined;

  constructor(port: MessagePort, flags: SharedArrayBuffer, segmentBytes = SEGMENT_BYTES) {
    this.#port = port;
    this.#flags = new Int32Array(flags);
    this.#segmentBytes = segmentBytes;
  }

  /** Append a record, readable when this returns; ring if `urgent` or the reader watches. */
  append(text: string, bytes: Uint8Array | undefined, urgent: boolean): void {
    const textBytes = Buffer.byteLength(text);
    const byteCount = bytes?.length ?? 0;
    const length = RECORD_HEAD + textBytes + byteCount;
    let segment = this.#segment;
    if (segment === undefined || segment.tail + length > segment.buf.length) {
      segment = this.#next(length);
    }
    const { buf } = segment;
    const at = segment.tail;
    buf.writeUInt32LE(textBytes, at);
    buf.writeUInt32LE(byteCount, at + 4);
    buf.write(text, at + RECORD_HEAD, textBytes, 'utf8');
    if (bytes !== undefined && byteCount > 0) buf.set(bytes, at + RECORD_HEAD + textBytes);
    segment.tail = at + length;
    Atomics.store(segment.head, TAIL, segment.tail);
    if (urgent || Atomics.load(this.#flags, WATCH) !== 0) this.#ring();
  }

  #ring(): void {
    if (Atomics.compareExchange(this.#flags, RUNG, 0, 1) === 0) {
      this.#port.postMessage(0 satisfies JournalMessage);
    }
  }

  /** A new segment: handed over first, then the old one sealed (so a reader that sees the seal finds the next). */
  #next(length: number): Segment {
    const sab = new SharedArrayBuffer(Math.max(this.#segmentBytes, HEAD_BYTES + length));
    const segment = segmentOf(sab);
    Atomics.store(segment.head, TAIL, HEAD_BYTES);
    this.#port.postMessage({ segment: sab } satisfies JournalMessage);
    const old = this.#segment;
    if (old) Atomics.store(old.head, SEALED, 1);
    this.#segment = segment;
    return segment;
  }
}

export class JournalReader {
  readonly #port: MessagePort;
  readonly #flags: Int32Array;
  readonly #onRecord: (text: string, bytes: Uint8Array) => void;
  /** The segment being read first, then those handed over after it. */
  readonly #segments: Segment[] = [];
  #offset = HEAD_BYTES;
  #closed = false;

  /** `onRecord` gets each record once, in order; its bytes are a copy of its own. */
  constructor(
    port: MessagePort,
    flags: SharedArrayBuffer,
    onRecord: (text: string, bytes: Uint8Array) => void,
  ) {
    this.#port = port;
    this.#flags = new Int32Array(flags);
    this.#onRecord = onRecord;
    // A new segment is taken, and read only once two full ones wait behind the one being
    // read: at most one read a MiB of records, so what nothing reads (a long run whose test
    // awaits something else) is applied — and the log's body budget bounds it — as it goes.
    port.on('message', (message: JournalMessage) => {
      if (message === 0) this.read();
      else {
        this.#take(message);
        if (this.#segments.length > 2) this.read();
      }
    });
  }

  /**
   * Read every record appended so far (re-entrant: `onRecord` may call it).
   * Messages are taken before the bell is reset, and the records read after
   * it, so no record is left unread without a bell still to come.
   */
  read(): void {
    // Idle with a bell still marked rung is a bell whose record was read before it rang (the
    // writer publishes the record, then rings): clear it, or no bell would ring again.
    if (this.#closed || (this.#idle() && Atomics.load(this.#flags, RUNG) === 0)) return;
    for (;;) {
      for (let m = receiveMessageOnPort(this.#port); m; m = receiveMessageOnPort(this.#port)) {
        this.#take(m.message as JournalMessage);
      }
      Atomics.store(this.#flags, RUNG, 0);
      if (!this.#readSegments()) return;
    }
  }

  /**
   * Whether something on this thread waits for records: while it does,
   * every record rings. Records appended before it was set rang no bell,
   * so they are read once this turn's code is done (its waiter in place).
   */
  watch(on: boolean): void {
    Atomics.store(this.#flags, WATCH, on ? 1 : 0);
    if (on) queueMicrotask(() => this.read());
  }

  close(): void {
    this.#closed = true;
    this.#segments.length = 0;
    this.#port.close();
  }

  /** Nothing to read: the segment being read has nothing new and is not sealed (the cheap check of every read). */
  #idle(): boolean {
    const segment = this.#segments[0];
    return (
      segment !== undefined &&
      Atomics.load(segment.head, SEALED) === 0 &&
      Atomics.load(segment.head, TAIL) === this.#offset
    );
  }

  #take(message: JournalMessage): void {
    if (message !== 0) this.#segments.push(segmentOf(message.segment));
  }

  /** Read what the segments hold; true when a sealed one's successor is still on the port. */
  #readSegments(): boolean {
    for (;;) {
      const segment = this.#segments[0];
      if (segment === undefined) return false;
      const sealed = Atomics.load(segment.head, SEALED) !== 0;
      const tail = Atomics.load(segment.head, TAIL);
      const at = this.#offset;
      if (at < tail) {
        const { buf } = segment;
        const textBytes = buf.readUInt32LE(at);
        const byteCount = buf.readUInt32LE(at + 4);
        const from = at + RECORD_HEAD + textBytes;
        const text = buf.toString('utf8', at + RECORD_HEAD, from);
        const bytes = new Uint8Array(byteCount);
        bytes.set(buf.subarray(from, from + byteCount));
        // Past it before it is delivered: a read() from onRecord goes on from the next one.
        this.#offset = from + byteCount;
        this.#onRecord(text, bytes);
        if (this.#closed) return false;
        continue;
      }
      if (!sealed) return false;
      if (this.#segments.length < 2) return true;
      this.#segments.shift();
      this.#offset = HEAD_BYTES;
    }
  }
}

import type { Readable } from 'node:stream';
import { describeValue } from '../internal/describe.js';
import { InvalidOptionError, WaitTimeoutError } from '../internal/errors.js';
import { DEFAULT_WAIT_MS } from '../internal/limits.js';
import { checkMs, checkOptionKeys } from '../internal/options.js';
import { checkMaxFrameBytes } from '../internal/wire/settings.js';
import { FrameDecoder, type FrameDecoderOptions } from './decoder.js';
import { StreamEndedError } from './errors.js';
import { resolveFraming } from './framing.js';
import { count } from './words.js';

export interface FrameReaderOptions extends FrameDecoderOptions {}

/**
 * Collects the frames that arrive on a socket (or any readable stream), so a
 * test can wait for them with a deadline instead of parsing bytes itself.
 * Create it with {@link createFrameReader}.
 */
export class FrameReader {
  readonly #decoder: FrameDecoder;
  readonly #frames: Buffer[] = [];
  readonly #waiters = new Set<() => boolean>();
  #ended = false;
  #error: Error | undefined;

  /** @internal Use `createFrameReader()`. */
  static attach(stream: Readable, decoder: FrameDecoder): FrameReader {
    return new FrameReader(stream, decoder);
  }

  private constructor(stream: Readable, decoder: FrameDecoder) {
    this.#decoder = decoder;
    stream.on('data', (chunk: Buffer | string) => {
      if (this.#error) return;
      try {
        const frames = this.#decoder.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
        for (const frame of frames) this.#frames.push(frame);
      } catch (error) {
        this.#error = error as Error;
      }
      this.#wake();
    });
    const ended = () => {
      this.#ended = true;
      this.#wake();
    };
    stream.on('end', ended);
    stream.on('close', ended);
    stream.on('error', (error: Error) => {
      this.#error ??= error;
      ended();
    });
  }

  /** The bodies of the frames received so far, in order. */
  frames(): Buffer[] {
    return [...this.#frames];
  }

  /** The frames received so far, decoded as UTF-8. */
  texts(): string[] {
    return this.#frames.map((frame) => frame.toString());
  }

  /** Whether the stream ended or closed: no more frames will come. */
  get ended(): boolean {
    return this.#ended;
  }

  /** A stream error, or the `FrameDecodeError` that stopped decoding, if any. */
  get error(): Error | undefined {
    return this.#error;
  }

  /** Bytes received that do not complete a frame (for example what a `sever-mid-frame` let through). */
  rest(): Buffer {
    return this.#decoder.rest();
  }

  /**
   * Resolve with every frame so far once at least `n` have arrived. Rejects
   * with a `WaitTimeoutError` after `timeoutMs` (default 4000 ms, below the
   * 5 s test timeout of vitest and jest), a `StreamEndedError` if the
   * stream ends first, or the `FrameDecodeError` that stopped decoding.
   *
   * @example
   * const [reply] = await replies.waitForFrames(1);
   */
  async waitForFrames(n: number, options: { timeoutMs?: number } = {}): Promise<Buffer[]> {
    const where = 'reader.waitForFrames()';
    if (!Number.isInteger(n) || n < 0) {
      throw new InvalidOptionError(
        `Expected the frame count of ${where} to be an integer >= 0, got ${describeValue(n)}.`,
      );
    }
    checkOptionKeys(options, ['timeoutMs'], where);
    const timeoutMs = checkMs(where, 'timeoutMs', options.timeoutMs, DEFAULT_WAIT_MS);
    await this.#until(
      () => {
        if (this.#frames.length >= n) return true;
        if (this.#error && !this.#ended) throw this.#error; // a FrameDecodeError
        if (this.#ended) throw this.#endedEarly(n);
        return false;
      },
      timeoutMs,
      () => `waited ${timeoutMs} ms for ${count(n, 'frame')}; got ${this.#got()}`,
    );
    return this.frames();
  }

  /**
   * Resolve once the stream ended or closed (say, after a sever); reject
   * with a `WaitTimeoutError` after `timeoutMs` (default 4000 ms).
   */
  async waitForEnd(options: { timeoutMs?: number } = {}): Promise<void> {
    const where = 'reader.waitForEnd()';
    checkOptionKeys(options, ['timeoutMs'], where);
    const timeoutMs = checkMs(where, 'timeoutMs', options.timeoutMs, DEFAULT_WAIT_MS);
    await this.#until(
      () => this.#ended,
      timeoutMs,
      () => `waited ${timeoutMs} ms for the stream to end; it is still open after ${this.#got()}`,
    );
  }

  /** `done` is checked now and on every event; it may throw to reject. */
  #until(done: () => boolean, timeoutMs: number, timedOut: () => string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const settle = (error?: unknown) => {
        this.#waiters.delete(check);
        clearTimeout(timer);
        if (error === undefined) resolve();
        else reject(error);
      };
      const check = (): boolean => {
        try {
          if (!done()) return false;
        } catch (error) {
          settle(error);
          return true;
        }
        settle();
        return true;
      };
      if (check()) return;
      this.#waiters.add(check);
      timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(new WaitTimeoutError(`FrameReader: ${timedOut()}.`));
      }, timeoutMs);
    });
  }

  #wake(): void {
    for (const check of [...this.#waiters]) check();
  }

  #got(): string {
    const partial = this.#decoder.buffered;
    const declared = this.#decoder.declaredLength;
    let text = count(this.#frames.length, 'frame');
    if (partial > 0) {
      text += ` and ${count(partial, 'byte')} of an unfinished one`;
      if (declared !== undefined) text += ` (its header declares ${count(declared, 'byte')})`;
    }
    return text;
  }

  #endedEarly(n: number): StreamEndedError {
    const how = this.#error ? `failed (${this.#error.message})` : 'ended';
    return new StreamEndedError(
      `FrameReader: the stream ${how} after ${this.#got()}, while waiting for ${n}. The peer closed its side before sending them: check what ended the connection (a sever, a fault, a crash).`,
      this.#frames.length,
      n,
      this.#error,
    );
  }
}

/**
 * Read length-prefixed frames from `stream` (a socket, a child's stdout) from
 * now on: the counterpart of `encodeFrame()` for test code. It adds a `'data'`
 * listener, so the stream flows; every frame is kept.
 *
 * @example
 * const client = connect(proxy.address);
 * const replies = createFrameReader(client);
 * client.write(encodeFrame('ping'));
 * await replies.waitForFrames(1);
 * expect(replies.texts()).toEqual(['pong']);
 */
export function createFrameReader(stream: Readable, options: FrameReaderOptions = {}): FrameReader {
  const where = 'createFrameReader()';
  if (
    typeof stream !== 'object' ||
    stream === null ||
    typeof (stream as Partial<Readable>).on !== 'function'
  ) {
    throw new InvalidOptionError(
      `Expected the stream passed to ${where} to be a readable stream such as a net.Socket, got ${describeValue(stream)}.`,
    );
  }
  checkOptionKeys(options, ['framing', 'maxFrameBytes'], where);
  // Checked here too, so that a message names this function, not the decoder.
  const framing = resolveFraming(options.framing, `the \`framing\` option of ${where}`);
  checkMaxFrameBytes(options.maxFrameBytes, framing, where);
  return FrameReader.attach(stream, new FrameDecoder(options));
}

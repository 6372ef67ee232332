import { EventEmitter } from 'node:events';
import type { Duplex, Readable, Writable } from 'node:stream';

/**
 * @internal A readable and a writable seen as one side of a proxy connection
 * (what ProxyConnection and Outbox use of a socket: data, end, drain, error,
 * close; pause, resume, write, end, destroy), without `Duplex.from`'s own
 * buffering: a chunk goes from the child's pipe to the pump as it came.
 * `'close'` comes once both halves have closed.
 */
export class StreamPair extends EventEmitter {
  readonly #readable: Readable;
  readonly #writable: Writable;

  static of(readable: Readable, writable: Writable): Duplex {
    return new StreamPair(readable, writable) as unknown as Duplex;
  }

  private constructor(readable: Readable, writable: Writable) {
    super();
    this.#readable = readable;
    this.#writable = writable;
    readable.on('data', (chunk: Buffer) => this.emit('data', chunk));
    readable.on('end', () => this.emit('end'));
    writable.on('drain', () => this.emit('drain'));
    const failed = (error: Error) => {
      if (this.listenerCount('error') > 0) this.emit('error', error);
    };
    readable.on('error', failed);
    writable.on('error', failed);
    let open = 2;
    const closed = () => {
      if (--open === 0) this.emit('close');
    };
    readable.once('close', closed);
    writable.once('close', closed);
  }

  pause(): this {
    this.#readable.pause();
    return this;
  }

  resume(): this {
    this.#readable.resume();
    return this;
  }

  write(data: Buffer): boolean {
    return this.#writable.write(data);
  }

  end(done?: () => void): this {
    if (this.#writable.writableFinished) done?.();
    else this.#writable.end(done);
    return this;
  }

  destroy(): this {
    this.#readable.destroy();
    this.#writable.destroy();
    return this;
  }
}

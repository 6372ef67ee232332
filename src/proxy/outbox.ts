import type { Socket } from 'node:net';
import type { Clock } from './clock.js';
import type { Tally } from './counters.js';
import type { Way } from './faults.js';

interface Item {
  data: Buffer;
  frames: number;
  /** Not before this clock time (delay faults); 0 for at once. */
  at: number;
}

/**
 * @internal What one direction of a connection writes to its destination, in order.
 * Untouched bytes go straight to `write()`; a delayed frame and everything
 * behind it wait in a FIFO queue. Backpressure runs end to end: when the
 * destination is full, or the queue holds more than `limit` bytes, the source
 * is paused until it drains.
 */
export class Outbox {
  readonly #items: Item[] = [];
  #queued = 0;
  #blocked = false;
  #paused = false;
  #timer: unknown;
  #timerAt = 0;
  #ending = false;
  #closed = false;
  #whenEmpty: Array<() => void> = [];

  constructor(
    private readonly way: Way,
    private readonly source: Socket,
    private readonly destination: Socket,
    private readonly tally: Tally,
    private readonly clock: Clock,
    private readonly limit: number,
  ) {
    destination.on('drain', () => {
      this.#blocked = false;
      this.#flush();
    });
  }

  /** Queue or write `data`, which completes `frames` frames; hold it until clock time `at`. */
  push(data: Buffer, frames: number, at = 0): void {
    if (this.#closed || (data.length === 0 && frames === 0)) return;
    if (this.#items.length === 0 && !this.#blocked && (at === 0 || at <= this.clock.now())) {
      this.#write(data, frames);
      return;
    }
    this.#items.push({ data, frames, at });
    this.#queued += data.length;
    this.#flush();
  }

  /** End the destination's write side once everything queued is written. */
  end(): void {
    this.#ending = true;
    this.#flush();
  }

  /** Run `fn` once everything queued so far has been handed to the destination. */
  afterFlush(fn: () => void): void {
    if (this.#items.length === 0) fn();
    else this.#whenEmpty.push(fn);
  }

  /** Stop: drop what is queued, cancel timers. */
  close(): void {
    this.#closed = true;
    this.#items.length = 0;
    this.#queued = 0;
    if (this.#timer !== undefined) this.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#whenEmpty = [];
  }

  get queuedBytes(): number {
    return this.#queued;
  }

  #write(data: Buffer, frames: number): void {
    if (data.length > 0 && !this.destination.write(data)) this.#blocked = true;
    this.tally.forwarded(this.way, frames, data.length);
    this.#applyBackpressure();
  }

  #flush(): void {
    if (this.#closed) return;
    while (this.#items.length > 0 && !this.#blocked) {
      const head = this.#items[0] as Item;
      if (head.at !== 0) {
        const wait = head.at - this.clock.now();
        if (wait > 0) {
          this.#schedule(head.at, wait);
          break;
        }
      }
      this.#items.shift();
      this.#queued -= head.data.length;
      this.#write(head.data, head.frames);
    }
    this.#applyBackpressure();
    if (this.#items.length === 0) {
      const waiting = this.#whenEmpty;
      this.#whenEmpty = [];
      for (const fn of waiting) fn();
      if (this.#ending && !this.#closed) {
        this.#ending = false;
        this.destination.end();
      }
    }
  }

  #schedule(at: number, wait: number): void {
    if (this.#timer !== undefined && this.#timerAt === at) return;
    if (this.#timer !== undefined) this.clock.clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = this.clock.setTimeout(() => {
      this.#timer = undefined;
      this.#flush();
    }, wait);
  }

  #applyBackpressure(): void {
    const shouldPause = this.#blocked || this.#queued > this.limit;
    if (shouldPause && !this.#paused) {
      this.#paused = true;
      this.source.pause();
    } else if (!shouldPause && this.#paused) {
      this.#paused = false;
      this.source.resume();
    }
  }
}

import type { Duplex } from 'node:stream';
import type { Clock } from './clock.js';
import type { Tally } from './counters.js';
import type { Way } from './faults.js';
import type { FrameHold, Holder } from './hold.js';

interface Item {
  data: Buffer;
  frames: number;
  /** Not before this clock time (delay faults); 0 for at once. */
  at: number;
  /** Not before this hold is released. */
  hold?: FrameHold;
}

/**
 * @internal What one direction of a connection writes to its destination, in order.
 * Untouched bytes go straight to `write()`; a delayed frame and everything
 * behind it wait in a FIFO queue. Backpressure runs end to end: when the
 * destination is full, or the queue holds more than `limit` bytes, the source
 * is paused until it drains. With a `rate` (bytes/s), writes are paced: each
 * piece (at most 20 ms worth) waits until the bytes before it would have
 * left at that rate.
 */
export class Outbox implements Holder {
  readonly #items: Item[] = [];
  #queued = 0;
  #blocked = false;
  #paused = false;
  #timer: unknown;
  #timerAt = 0;
  #ending = false;
  #closed = false;
  #whenEmpty: Array<() => void> = [];
  /** With a rate: the clock time before which the next piece may not be written. */
  #paceAt = 0;
  readonly #piece: number;

  constructor(
    private readonly way: Way,
    private readonly source: Duplex,
    private readonly destination: Duplex,
    private readonly tally: Tally,
    private readonly clock: Clock,
    private readonly limit: number,
    private readonly rate = 0,
    /** Called once, when this direction can carry nothing more: its destination was ended after the last byte, or the outbox was closed. */
    private onDone: (() => void) | undefined = undefined,
  ) {
    this.#piece = rate > 0 ? Math.max(1, Math.min(64 * 1024, Math.floor(rate / 50))) : 0;
    destination.on('drain', () => {
      this.#blocked = false;
      this.#flush();
    });
  }

  /** Queue or write `data`, which completes `frames` frames; hold it until clock time `at`. */
  push(data: Buffer, frames: number, at = 0): void {
    if (this.#closed || (data.length === 0 && frames === 0)) return;
    const piece = this.#piece;
    if (piece === 0) {
      if (this.#items.length === 0 && !this.#blocked && (at === 0 || at <= this.clock.now())) {
        this.#write(data, frames);
        return;
      }
      this.#items.push({ data, frames, at });
    } else {
      // Paced: in pieces; the last one completes the frames.
      for (let from = 0; from < data.length || from === 0; from += piece) {
        const last = from + piece >= data.length;
        this.#items.push({
          data: data.subarray(from, from + piece),
          frames: last ? frames : 0,
          at: from === 0 ? at : 0,
        });
        if (last) break;
      }
    }
    this.#queued += data.length;
    this.#flush();
  }

  /** Queue `data` (one frame) until `hold` is released; frames behind it wait too. */
  hold(data: Buffer, hold: FrameHold): void {
    if (this.#closed) return;
    if (!hold.catch(this)) {
      this.push(data, 1); // released meanwhile: it goes on like any frame
      return;
    }
    this.#items.push({ data, frames: 1, at: 0, hold });
    this.#queued += data.length;
    this.#flush();
  }

  /** Whether nothing of what was pushed is held here or in the destination's buffer (all of it was written through). */
  get flushed(): boolean {
    return this.#items.length === 0 && this.destination.writableLength === 0;
  }

  /** Items still queued (delayed, held, paced, or waiting for the destination to drain). */
  get pending(): number {
    return this.#items.length;
  }

  /** @internal A hold was released: write what it let go. */
  kick(): void {
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
    const held = new Map<FrameHold, number>();
    for (const item of this.#items) {
      if (item.hold && !item.hold.open) held.set(item.hold, (held.get(item.hold) ?? 0) + 1);
    }
    for (const [hold, frames] of held) hold.drop(this, frames);
    this.#items.length = 0;
    this.#queued = 0;
    if (this.#timer !== undefined) this.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#whenEmpty = [];
    this.#done();
  }

  #done(): void {
    const done = this.onDone;
    this.onDone = undefined;
    done?.();
  }

  /**
   * @internal What waits here, for the leak report (LK-02): frames and
   * bytes, frames behind an unreleased hold, and the longest delay left (ms).
   */
  queued(): { frames: number; bytes: number; held: number; delayMs: number } {
    let frames = 0;
    let held = 0;
    let latest = 0;
    for (const item of this.#items) {
      frames += item.frames;
      if (item.hold && !item.hold.open) held += item.frames;
      if (item.at > latest) latest = item.at;
    }
    const delayMs = latest === 0 ? 0 : Math.max(0, latest - this.clock.now());
    return { frames, bytes: this.#queued, held, delayMs };
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
      if (head.hold && !head.hold.open) break;
      const at = Math.max(head.at, this.#paceAt);
      if (at !== 0) {
        const wait = at - this.clock.now();
        if (wait > 0) {
          this.#schedule(at, wait);
          break;
        }
      }
      this.#items.shift();
      this.#queued -= head.data.length;
      this.#write(head.data, head.frames);
      if (this.rate > 0) {
        this.#paceAt =
          Math.max(this.#paceAt, this.clock.now()) + (head.data.length * 1000) / this.rate;
      }
    }
    this.#applyBackpressure();
    if (this.#items.length === 0) {
      const waiting = this.#whenEmpty;
      this.#whenEmpty = [];
      for (const fn of waiting) fn();
      if (this.#ending && !this.#closed) {
        this.#ending = false;
        this.destination.end();
        this.#done();
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

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { EntryPatch } from '../protocol.js';
import type { WorkerHold } from './holds.js';
import type { EntryLog } from './log.js';

/**
 * One claimed request being answered: its socket, its counters, and the
 * waits a writer needs (a gap, 'drain', the flush of what was written), each
 * of which ends early — with `false` — once the client is gone. The end of
 * the response is posted once (`end()`, before the last byte or the cut),
 * and its last write callback once (`finish()`, what `waitSatisfied()`
 * waits for). A client that leaves before `end()` ends it `client-abort`.
 */
export class Exchange {
  readonly gen: number;
  readonly seq: number;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly socket: Socket;
  readonly log: EntryLog;
  readonly timeoutMs: number;
  /** The hold that caught it, until its writer paused there. */
  hold: WorkerHold | undefined;
  /** `POST /v1/x (request #3)`, for messages. */
  readonly label: string;
  bytesSent = 0;
  events = 0;
  /** Pieces (events or chunks) written whole. */
  pieces = 0;
  closed = false;
  #ended = false;
  #finished = false;
  readonly #wakers = new Set<() => void>();

  constructor(init: {
    gen: number;
    seq: number;
    req: IncomingMessage;
    res: ServerResponse;
    log: EntryLog;
    timeoutMs: number;
    hold: WorkerHold | undefined;
    label: string;
  }) {
    this.gen = init.gen;
    this.seq = init.seq;
    this.req = init.req;
    this.res = init.res;
    this.socket = init.req.socket;
    this.log = init.log;
    this.timeoutMs = init.timeoutMs;
    this.hold = init.hold;
    this.label = init.label;
    this.res.on('error', () => {});
    this.res.once('close', () => this.#onClose());
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Post a change of this request's entry now. */
  patch(patch: EntryPatch): void {
    this.log.patch(this.gen, this.seq, patch);
  }

  /** The counters moved (posted at the end of the turn). */
  progress(): void {
    this.log.progress(this.gen, this.seq, this.bytesSent, this.events);
  }

  /** The response's end, posted before its last byte (or its cut). */
  end(endedBy: 'complete' | 'cut', error?: string): void {
    if (this.#ended) return;
    this.#ended = true;
    const patch: EntryPatch = { endedBy, bytesSent: this.bytesSent, events: this.events };
    if (error !== undefined) patch.error = error;
    this.patch(patch);
  }

  /** Its last byte was written (or it can never be): `endedAt`. */
  finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.patch({ endedAt: Date.now() });
  }

  /** Resolve true after `ms`, false at once if the client is gone first. */
  wait(ms: number): Promise<boolean> {
    return this.#until((wake) => {
      const timer = setTimeout(() => wake(true), ms);
      return () => clearTimeout(timer);
    });
  }

  /** Resolve true on the socket's 'drain', false if the client is gone first. */
  drain(): Promise<boolean> {
    return this.#until((wake) => {
      const onDrain = () => wake(true);
      this.res.once('drain', onDrain);
      return () => this.res.off('drain', onDrain);
    });
  }

  /** Resolve true once everything written so far left (its write callback), false if the client is gone first. */
  flushed(): Promise<boolean> {
    return this.#until((wake) => {
      this.socket.write(Buffer.alloc(0), () => wake(true));
      return () => {};
    });
  }

  #until(start: (wake: (value: boolean) => void) => () => void): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      let stop: () => void = () => {};
      const wake = (value: boolean) => {
        if (!this.#wakers.delete(onClose)) return;
        stop();
        resolve(value && !this.closed);
      };
      const onClose = () => wake(false);
      this.#wakers.add(onClose);
      stop = start(wake);
    });
  }

  #onClose(): void {
    this.closed = true;
    if (!this.#ended) {
      this.#ended = true;
      this.patch({ endedBy: 'client-abort', bytesSent: this.bytesSent, events: this.events });
    }
    this.finish();
    for (const wake of [...this.#wakers]) wake();
  }
}

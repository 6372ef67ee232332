import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { EntryPatch } from '../protocol.js';
import type { WorkerHold } from './holds.js';
import { applyPatch, type EntryLog } from './log.js';

/**
 * One claimed request being answered: its socket, its counters, and the
 * waits a writer needs (a gap, 'drain', the flush of what was written, its
 * turn on a pipelined connection), each of which ends early — with `false`
 * — once the client is gone. The end of the response is posted once
 * (`end()`, before the last byte or the cut), and its last write callback
 * once (`finish()`, what `waitSatisfied()` waits for).
 *
 * What the client really got: `bytesSent`/`events` count what the writer
 * handed on (posted before the bytes); beside them the body bytes and
 * events whose write completed are counted. When the connection closes (or
 * the client's FIN or a socket error comes) before the response was
 * delivered whole — its last write callback, or every byte before its cut
 * — the entry is corrected to `client-abort` with the delivered counts, or,
 * when `dispose()` closed it, to `cut` with an `error` saying so.
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
  /** The id of the hold it is paused at, while it is. */
  pausedAt: number | undefined;
  /** A hold's release() replaced (part of) the scripted response. */
  replaced = false;
  /** Gives the claimed response back when the client leaves before its last byte (a `retryable` one); whether it did. */
  requeue: (() => boolean) | undefined;
  /** Body bytes and events whose write completed. */
  readonly #sent = { bytes: 0, events: 0 };
  readonly #disposed: () => boolean;
  #error: string | undefined;
  /** The status and headers set but not written yet: they go with the next patch. */
  #head: EntryPatch | undefined;
  #ended = false;
  /** Every byte of the answer was written (or, for a cut, every byte before it). */
  #delivered = false;
  #finished = false;
  /** The answer's last byte was written with the rest (not cut, not aborted). */
  #whole = false;
  /** Made on the first wait (most answers never wait). */
  #wakers: Set<() => void> | undefined;
  readonly #unwatch: () => void;

  constructor(init: {
    gen: number;
    seq: number;
    req: IncomingMessage;
    res: ServerResponse;
    log: EntryLog;
    timeoutMs: number;
    hold: WorkerHold | undefined;
    label: string;
    /** Whether the server is being disposed (a connection it closes is not the client's doing). */
    disposed?: () => boolean;
    /** The entry's `error` as posted. */
    error?: string;
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
    this.#disposed = init.disposed ?? (() => false);
    this.#error = init.error;
    this.res.on('error', ignore);
    this.#unwatch = watch(this.socket, (hard) => this.#left(hard));
    // 'close' comes once: a plain listener, without the wrapper once() makes.
    this.res.on('close', () => this.#onClose());
  }

  get ended(): boolean {
    return this.#ended;
  }

  /**
   * A client already gone when its answer starts (it left while the claim
   * waited, for a predicate or a function): its close came before this
   * Exchange listened, so notice it now — after `requeue` is set, so a
   * retryable response is given back.
   */
  noticeGone(): void {
    if (!this.closed && (this.socket.destroyed || this.res.destroyed)) this.#onClose();
  }

  /** The entry's `error` as posted so far. */
  get error(): string | undefined {
    return this.#error;
  }

  /** Post a change of this request's entry now. */
  patch(patch: EntryPatch): void {
    const head = this.#head;
    this.#head = undefined;
    const change = head === undefined ? patch : applyPatch(head, patch);
    if ('error' in change) this.#error = change.error;
    this.log.patch(this.gen, this.seq, change);
  }

  /**
   * The status line and headers are set (`res.writeHead()`), to be written
   * with the body in one `end()`: their patch goes with the next one — the
   * end, posted before that write.
   */
  headed(head: EntryPatch): void {
    if ('error' in head) this.#error = head.error;
    this.#head = head;
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
    this.#delivered = true;
    if (this.#finished) return;
    this.#finished = true;
    this.patch({ endedAt: Date.now() });
  }

  /** Every byte before a stall was written: what the client does next does not change the entry. */
  delivered(): void {
    this.#delivered = true;
  }

  /**
   * This response ends the connection (a cut, a reset, a `wireBase64`
   * answer, `connection: close`): responses pipelined behind it that never
   * go out are then logged `cut`, not `client-abort`.
   */
  endsConnection(): void {
    closers.set(this.socket, this.label);
  }

  /**
   * The server ends the connection itself (a stall's `timeoutMs`): the
   * entry keeps its end, with the counts of what was really written.
   */
  closeByServer(): void {
    if (!this.#delivered) {
      this.#delivered = true;
      if (this.#sent.bytes !== this.bytesSent || this.#sent.events !== this.events)
        this.patch({ bytesSent: this.#sent.bytes, events: this.#sent.events });
    }
    this.endsConnection();
    this.socket.destroy();
  }

  /** `res.write(piece)`, counted as sent (with `events` events) once its write completed. */
  write(piece: Uint8Array, events = 0): boolean {
    return this.res.write(piece, (error?: Error | null) => {
      if (error) return;
      this.#sent.bytes += piece.length;
      this.#sent.events += events;
    });
  }

  /** Whether the whole answer was written: its last byte left with everything before it. */
  get wholeWritten(): boolean {
    return this.#whole;
  }

  /** `res.end(piece)`, counted as sent; then `finish()`. */
  endWith(piece: Uint8Array | undefined, events = 0): void {
    const done = () => {
      this.#sent.bytes += piece?.length ?? 0;
      this.#sent.events += events;
      this.#whole = true;
      this.finish();
    };
    if (piece === undefined || piece.length === 0) this.res.end(done);
    else this.res.end(piece, done);
  }

  /** Bytes on the bare socket (`wireBase64`), counted as sent once written. */
  writeRaw(piece: Uint8Array, last: boolean): boolean {
    const counted = (error?: Error | null) => {
      if (error) return;
      this.#sent.bytes += piece.length;
      if (last) this.finish();
    };
    if (last) {
      this.socket.end(piece, (error?: Error | null) => counted(error));
      return true;
    }
    return this.socket.write(piece, counted);
  }

  /** Resolve true after `ms`, false at once if the client is gone first. */
  wait(ms: number): Promise<boolean> {
    return this.#until((wake) => {
      const timer = setTimeout(() => wake(true), ms);
      return () => clearTimeout(timer);
    });
  }

  /** Resolve true on the response's 'drain', false if the client is gone first. */
  drain(): Promise<boolean> {
    return this.#until((wake) => {
      const onDrain = () => wake(true);
      this.res.once('drain', onDrain);
      return () => this.res.off('drain', onDrain);
    });
  }

  /**
   * Resolve true once this response has the connection: at once, or — a
   * pipelined request answered behind an earlier one on the same connection
   * — when Node hands it the socket after the earlier response finished.
   * What it wrote before waits in the response until then. False if the
   * client is gone first.
   */
  onWire(): Promise<boolean> {
    if (this.res.socket) return Promise.resolve(!this.closed);
    return this.#until((wake) => {
      const onSocket = () => wake(true);
      this.res.once('socket', onSocket);
      return () => this.res.off('socket', onSocket);
    });
  }

  /** Resolve true once everything written so far left (on the wire: its write callback), false if the client is gone first. */
  async flushed(): Promise<boolean> {
    if (!(await this.onWire())) return false;
    return this.#until((wake) => {
      this.socket.write(Buffer.alloc(0), () => wake(true));
      return () => {};
    });
  }

  #until(start: (wake: (value: boolean) => void) => () => void): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      let stop: () => void = () => {};
      this.#wakers ??= new Set();
      const wakers = this.#wakers;
      const wake = (value: boolean) => {
        if (!wakers.delete(onClose)) return;
        stop();
        resolve(value && !this.closed);
      };
      const onClose = () => wake(false);
      wakers.add(onClose);
      stop = start(wake);
    });
  }

  /**
   * The client's FIN (`hard` false) or a socket error or close (`hard`).
   * After a FIN Node ends the connection (no half-open HTTP), so a response
   * that still has bytes to write can never be finished: it is an abort at
   * once. One whose last bytes are in flight waits for their write callback
   * or the close.
   */
  #left(hard: boolean): void {
    if (this.#delivered || this.closed) return;
    if (!hard && this.#ended) return;
    this.#onClose();
  }

  #onClose(): void {
    if (this.closed) return;
    this.closed = true;
    this.#unwatch();
    if (!this.#delivered) {
      this.#delivered = true;
      this.#ended = true;
      const patch: EntryPatch = { bytesSent: this.#sent.bytes, events: this.#sent.events };
      const closer = closers.get(this.socket);
      let note: string | undefined;
      if (this.#disposed()) {
        const held = this.pausedAt === undefined ? '' : ` while hold() #${this.pausedAt} held it`;
        note = `shimkit: dispose() closed the connection of ${this.label}${held}, before its response was finished.`;
      } else if (closer !== undefined && closer !== this.label) {
        note = `shimkit: the server closed the connection after the response to ${closer} (its cut, reset, wireBase64 answer or connection: close), before the response to ${this.label}, pipelined behind it, was sent.`;
      }
      if (note === undefined) {
        patch.endedBy = 'client-abort';
        if (this.requeue?.()) patch.requeued = true;
      } else {
        patch.endedBy = 'cut';
        patch.error = this.#error === undefined ? note : `${this.#error} ${note}`;
      }
      this.patch(patch);
    }
    this.finish();
    if (this.#wakers) for (const wake of [...this.#wakers]) wake();
  }
}

function ignore(): void {}

/** The response that ended each connection, by label, when one did. */
const closers = new WeakMap<Socket, string>();

type Watcher = (hard: boolean) => void;
const watchers = new WeakMap<Socket, Set<Watcher>>();

/**
 * Call `watcher` on the socket's 'end' (false), 'error' and 'close' (true),
 * until the returned function is called. One set of listeners per socket,
 * however many requests are pipelined on it.
 */
function watch(socket: Socket, watcher: Watcher): () => void {
  let set = watchers.get(socket);
  if (!set) {
    const all = new Set<Watcher>();
    set = all;
    watchers.set(socket, all);
    const notify = (hard: boolean) => {
      for (const w of [...all]) w(hard);
    };
    socket.on('end', () => notify(false));
    socket.on('error', () => notify(true));
    socket.on('close', () => notify(true));
  }
  set.add(watcher);
  const mine = set;
  return () => mine.delete(watcher);
}

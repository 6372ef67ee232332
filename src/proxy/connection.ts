import type { Duplex } from 'node:stream';
import { reset } from '../internal/socket-reset.js';
import type { Clock } from './clock.js';
import { Tally, type WayCount } from './counters.js';
import type { FaultAction, Rule, Way } from './faults.js';
import type { PumpContext } from './frame-pump.js';
import type { Wire } from './framing.js';
import { Outbox } from './outbox.js';
import type { OwnReads } from './own-reads.js';
import { Pump } from './pump.js';
import { SplitPump } from './split-pump.js';

/** How a connection is closed on cue: FIN (a clean end) or RST (a reset, where the transport has one). */
export type SeverMode = 'fin' | 'rst';

/** @internal What a connection needs from its proxy. */
export interface ConnectionHost {
  clock: Clock;
  framing: Wire;
  maxFrameBytes: number;
  seed: number;
  outboxLimit: number;
  /** Bytes per second per direction; 0 for unlimited. */
  bandwidth: Record<Way, number>;
  total: Tally;
  match(connection: number, way: Way, frame: number): Rule | undefined;
  mayHit(connection: number, way: Way): boolean;
  tooLarge(
    connection: number,
    way: Way,
    frame: number,
    declaredLength: number,
    atLeast?: boolean,
  ): void;
  malformed(connection: number, way: Way, frame: number, reason: string): void;
  /** That way of that connection can carry nothing more: it ended after its last frame, or was closed. */
  wayDone(connection: number, way: Way): void;
  faulted(connection: number, way: Way, frame: number, action: FaultAction): void;
  onFrame: ((connection: number, way: Way, frame: number, length: number) => void) | undefined;
  record:
    | ((
        connection: number,
        way: Way,
        frame: number,
        body: Buffer,
        length: number,
        rule: Rule | undefined,
        /** Set for a frame cut short by end of stream: its body bytes that arrived. */
        arrived: number | undefined,
      ) => void)
    | undefined;
  recordBytes: number;
}

/** What `connection.stats()` returns: frames and bytes per direction and faults by kind, on one connection. */
export interface ConnectionStats {
  /** 1-based, in accept order. */
  id: number;
  /** Whether either socket was still open. */
  open: boolean;
  c2s: WayCount;
  s2c: WayCount;
  faults: Partial<Record<FaultAction, number>>;
  /** Frames the source cut short by ending its stream, per direction: forwarded as bytes, not counted as frames. */
  cutShort: Record<Way, number>;
}

/** One client connection and its upstream twin, as `proxy.connections` and the `'connection'` event give it. */
export class ProxyConnection {
  /** 1-based, in accept order. */
  readonly id: number;
  readonly #client: Duplex;
  readonly #upstream: Duplex;
  readonly #tally: Tally;
  readonly #pumps: Record<Way, Pump | SplitPump>;
  readonly #outboxes: Record<Way, Outbox>;
  #open = true;
  #closing = false;

  /** @internal The proxy accepted `client` and reached `upstream` for it. */
  static open(
    id: number,
    client: Duplex,
    upstream: Duplex,
    host: ConnectionHost,
    reads?: Partial<Record<Way, OwnReads>>,
  ): ProxyConnection {
    return new ProxyConnection(id, client, upstream, host, reads);
  }

  private constructor(
    id: number,
    client: Duplex,
    upstream: Duplex,
    host: ConnectionHost,
    reads: Partial<Record<Way, OwnReads>> | undefined,
  ) {
    this.id = id;
    this.#client = client;
    this.#upstream = upstream;
    this.#tally = new Tally(host.total);
    const context: PumpContext = {
      connection: id,
      maxFrameBytes: host.maxFrameBytes,
      seed: host.seed,
      now: () => host.clock.now(),
      match: (way, frame) => host.match(id, way, frame),
      mayHit: (way) => host.mayHit(id, way),
      tooLarge: (way, frame, length, atLeast) => {
        this.sever({ mode: 'fin' });
        host.tooLarge(id, way, frame, length, atLeast);
      },
      malformed: (way, frame, reason) => {
        this.sever({ mode: 'fin' });
        host.malformed(id, way, frame, reason);
      },
      faulted: (way, frame, action) => {
        this.#tally.fault(action);
        host.faulted(id, way, frame, action);
      },
      sever: (mode, after) => {
        if (after) after.afterFlush(() => this.sever({ mode }));
        else this.sever({ mode });
      },
      get onFrame() {
        const report = host.onFrame;
        return report
          ? (way: Way, frame: number, length: number) => report(id, way, frame, length)
          : undefined;
      },
      cutShort: (way, cut) => {
        this.#tally.cut(way);
        host.record?.(id, way, cut.frame, cut.body, cut.length, cut.rule, cut.arrived);
      },
      record: host.record
        ? (way, frame, body, length, rule) =>
            host.record?.(id, way, frame, body, length, rule, undefined)
        : undefined,
      recordBytes: host.recordBytes,
    };
    this.#outboxes = {
      c2s: new Outbox(
        'c2s',
        client,
        upstream,
        this.#tally,
        host.clock,
        host.outboxLimit,
        host.bandwidth.c2s,
        () => host.wayDone(id, 'c2s'),
      ),
      s2c: new Outbox(
        's2c',
        upstream,
        client,
        this.#tally,
        host.clock,
        host.outboxLimit,
        host.bandwidth.s2c,
        () => host.wayDone(id, 's2c'),
      ),
    };
    const framing = host.framing;
    const pump = (way: Way) =>
      framing.kind === 'split'
        ? new SplitPump(way, this.#outboxes[way], framing, context)
        : new Pump(way, this.#outboxes[way], framing, context);
    this.#pumps = { c2s: pump('c2s'), s2c: pump('s2c') };
    for (const way of ['c2s', 's2c'] as const) {
      const pump = this.#pumps[way];
      const feed = (chunk: Buffer) => pump.data(chunk);
      const own = reads?.[way];
      if (own) {
        // A read's buffer is read into again once nothing holds a view of it.
        const out = this.#outboxes[way];
        own.attach(feed, () => out.flushed && !pump.holdsChunks());
      } else {
        (way === 'c2s' ? client : upstream).on('data', feed);
      }
    }
    // Half-close: one side ending its writes ends the other side's, after what was forwarded.
    client.on('end', () => this.#pumps.c2s.end());
    upstream.on('end', () => this.#pumps.s2c.end());
    // An error on either side (a reset, a broken pipe) ends the connection,
    // unless it is being severed on cue (then the sever decides how).
    const onError = () => {
      if (!this.#closing) this.#destroy();
    };
    client.on('error', onError);
    upstream.on('error', onError);
    let closedSides = 0;
    const onClose = (side: Duplex) => {
      closedSides += 1;
      if (closedSides === 2) {
        this.#open = false;
        return;
      }
      if (this.#closing) return;
      // What the closed side sent that still waits in the proxy (a delay, a
      // hold, pacing) goes on to the other side first, then that side ends.
      const [from, to] =
        side === client
          ? [this.#outboxes.c2s, this.#outboxes.s2c]
          : [this.#outboxes.s2c, this.#outboxes.c2s];
      to.close();
      if (from.pending === 0) {
        this.#destroy();
        return;
      }
      from.end();
      from.afterFlush(() => {
        const other = side === client ? upstream : client;
        other.end(() => {
          if (!this.#closing) this.#destroy();
        });
      });
    };
    client.on('close', () => onClose(client));
    upstream.on('close', () => onClose(upstream));
  }

  /** Whether either socket is still open. */
  get open(): boolean {
    return this.#open;
  }

  /** @internal What waits in the proxy in direction `way` of this connection (see `Outbox.queued()`). */
  queued(way: Way): ReturnType<Outbox['queued']> {
    return this.#outboxes[way].queued();
  }

  /** Frames forwarded in one direction on this connection. */
  forwarded(direction: Way): number {
    return this.#tally[direction].frames;
  }

  /** Frames and bytes per direction and faults by kind, on this connection. */
  stats(): ConnectionStats {
    return { id: this.id, open: this.#open, ...this.#tally.snapshot() };
  }

  /**
   * Close both sides now: `'fin'` ends them cleanly, `'rst'` resets them
   * (TCP; a Unix socket or a pipe has no reset and is closed). Nothing more is forwarded.
   */
  sever(options: { mode?: SeverMode } = {}): void {
    if (this.#closing) return;
    this.#closing = true;
    const mode = options.mode ?? 'fin';
    for (const way of ['c2s', 's2c'] as const) {
      this.#pumps[way].stop();
      this.#outboxes[way].close();
    }
    for (const socket of [this.#client, this.#upstream]) {
      if (mode === 'rst') reset(socket);
      else {
        socket.end(() => socket.destroy());
        socket.resume(); // read and discard, so the peer sees a clean end, not a reset
      }
    }
  }

  /** @internal Close both sockets at once (the proxy is closing). */
  destroy(): void {
    this.#destroy();
  }

  #destroy(): void {
    this.#closing = true;
    for (const way of ['c2s', 's2c'] as const) {
      this.#pumps[way].stop();
      this.#outboxes[way].close();
    }
    this.#client.destroy();
    this.#upstream.destroy();
  }
}

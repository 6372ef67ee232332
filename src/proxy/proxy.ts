import { EventEmitter } from 'node:events';
import { connect, type Server, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { describeValue } from '../internal/describe.js';
import { InvalidOptionError } from '../internal/errors.js';
import { onProcessExit } from '../internal/exit-cleanup.js';
import { holdLines, sizeText } from '../internal/leak-lines.js';
import { type Tracked, trackLeak, untrackLeak } from '../internal/leak-registry.js';
import { recordSocket } from '../internal/leftovers/registry.js';
import { DEFAULT_WAIT_MS } from '../internal/limits.js';
import { checkMs, checkOptionKeys } from '../internal/options.js';
import { parseFaults } from '../internal/wire/rules.js';
import { formatAddress, type ResolvedAddress, type TcpAddress } from './address.js';
import { realClock } from './clock.js';
import { type ConnectionHost, ProxyConnection, type SeverMode } from './connection.js';
import { Tally } from './counters.js';
import { UpstreamConnectError } from './errors.js';
import { type HoldRule, parseHoldRule, type Rule, type Way } from './faults.js';
import { FrameHold } from './hold.js';
import { connectionHost } from './host.js';
import { adoptAccepted, OwnReads } from './own-reads.js';
import type { FrameProxyOptions, FrameProxyStats } from './proxy-options.js';
import type { FrameRecord, Recorder } from './recorder.js';
import type { ProxySettings } from './settings.js';
import { ProxyWaits } from './waits.js';
import { count } from './words.js';

/** @internal What `createFrameProxy()` hands to the proxy it made. */
interface ProxyInit extends ProxySettings {
  /** undefined for proxyStdio(): connections are attached, not accepted. */
  server: Server | undefined;
  listen: ResolvedAddress;
  upstream: ResolvedAddress;
}

/**
 * A man-in-the-middle between a client and a server that parses frames and
 * injects faults on cue. Create it with {@link createFrameProxy}; `A` is the
 * type of {@link FrameProxy.address}.
 *
 * Events: `'connection'` (ProxyConnection), `'fault'` (FaultEvent), `'frame'`
 * (FrameEvent), `'record'` (FrameRecord, with `record: true`), `'error'` (FrameTooLargeError, FrameMalformedError, UpstreamConnectError — kept in
 * `errors()` too, and only emitted when someone listens, so an expected fault
 * never crashes the test), `'close'`.
 *
 * Neither the listening proxy nor its side of a connection keeps the process
 * alive (requirement SP-10): a proxy a test forgot to close never holds the runner
 * open, and the exit cleanup still closes it and removes its socket file.
 * Traffic keeps flowing while the peers' own sockets keep the process alive.
 */
export class FrameProxy<A extends string | TcpAddress = string | TcpAddress> extends EventEmitter {
  /**
   * The listen address, for `net.connect(proxy.address)`: the socket path, or
   * `{ host, port }` with the real port.
   */
  readonly address: A;
  /**
   * Every connection that reached the upstream, in accept order (closed ones
   * included). Its `id` counts every accepted client, so a client whose
   * upstream connect failed leaves a gap.
   */
  readonly connections: ProxyConnection[] = [];
  readonly #server: Server | undefined;
  readonly #upstream: ResolvedAddress;
  readonly #total: Tally;
  readonly #errors: Error[] = [];
  readonly #waits: ProxyWaits;
  /** proxyStdio(): told when a direction of its one connection can carry nothing more. */
  readonly #onWayDone = new Map<number, (way: Way) => void>();
  readonly #forgetExit: () => void;
  readonly #unrecord: () => void;
  readonly #settings: ProxyInit;
  #rules: Rule[];
  #holds: Rule[] = [];
  readonly #started: number;
  #frameListeners = false;
  #accepted = 0;
  #closed = false;
  /** The leak sanitizer's record of it (LK-02), when made in a sanitizer scope. */
  readonly #leak: Tracked | undefined;

  /** @internal Use `createFrameProxy()` or `proxyStdio()`. */
  static create<A extends string | TcpAddress>(init: ProxyInit): FrameProxy<A> {
    return new FrameProxy<A>(init);
  }

  private constructor(init: ProxyInit) {
    super();
    const { server, listen } = init;
    this.#settings = init;
    this.#server = server;
    this.#upstream = init.upstream;
    this.#rules = init.rules;
    this.#started = this.#now();
    this.#total = new Tally(undefined, () => this.#waits.notify());
    this.#waits = new ProxyWaits({
      name: `Proxy on ${formatAddress(listen)}`,
      forwarded: (way) => this.#total[way].frames,
      progress: () =>
        `forwarded so far: c2s ${this.#total.c2s.frames}, s2c ${this.#total.s2c.frames} over ${count(this.connections.length, 'connection')}`,
    });
    const bound = server?.address();
    this.address = (
      listen.kind !== 'tcp'
        ? listen.path
        : {
            host: listen.host,
            port: typeof bound === 'object' && bound ? bound.port : listen.port,
          }
    ) as A;
    this.on('newListener', (event) => {
      if (event === 'frame') this.#frameListeners = true;
    });
    this.on('removeListener', () => {
      this.#frameListeners = this.listenerCount('frame') > 0;
    });
    server?.on('connection', (client) => this.#accept(client));
    // requirement SP-10: a forgotten proxy never keeps the process alive. Traffic it
    // forwards comes from peers that do (the test's own sockets, the processes
    // it spawned), and a write, connect or delay in flight keeps it alive too.
    server?.unref();
    // A proxy without a server (proxyStdio, a faulted passthrough) has nothing to close at exit but its streams' owners do.
    this.#forgetExit = server ? onProcessExit(() => this.#closeNow()) : () => {};
    // If this process dies where no exit hook runs, the sweep removes the socket file (requirement SP-11).
    this.#unrecord = listen.kind === 'unix' ? recordSocket(listen.path) : () => {};
    this.#leak = server
      ? trackLeak('frame proxy', formatAddress(listen), {
          holds: () => this.leakHolds(),
          endpoints: () => [endpointOf(this.address), endpointOf(this.#upstream)],
          dispose: () => this.close(),
        })
      : undefined;
  }

  /** @internal What the leak sanitizer reports of an unclosed proxy (LK-02): connections, queued frames. */
  leakHolds(): string[] {
    if (this.#closed) return [];
    const open = this.connections.filter((c) => c.open);
    if (open.length === 0) return [];
    return holdLines({
      'its connections': () => {
        const shown = open.slice(0, 5).map((c) => {
          const { c2s, s2c } = c.stats();
          return `#${c.id} (c2s ${count(c2s.frames, 'frame')} ${sizeText(c2s.bytes)}, s2c ${count(s2c.frames, 'frame')} ${sizeText(s2c.bytes)})`;
        });
        const more = open.length > 5 ? ` … and ${open.length - 5} more` : '';
        return `${count(open.length, 'client connection')} open: ${shown.join('; ')}${more}`;
      },
      'its queued frames': () => (['c2s', 's2c'] as const).flatMap((way) => queuedLine(open, way)),
    });
  }

  /** Frames forwarded in one direction, over all connections. */
  forwarded(direction: Way): number {
    return this.#total[checkWay(direction, 'proxy.forwarded()')].frames;
  }

  /**
   * Frames and bytes per direction, per connection, faults applied by kind,
   * and frames cut short by end of stream (`cutShort`). Readable after close.
   */
  stats(): FrameProxyStats {
    return { ...this.#total.snapshot(), connections: this.connections.map((c) => c.stats()) };
  }

  /** Errors so far (FrameTooLargeError, FrameMalformedError, UpstreamConnectError), also emitted as `'error'` when listened to. */
  errors(): Error[] {
    return [...this.#errors];
  }

  /** Sever every open connection now; connections accepted afterwards work normally. */
  sever(options: { mode?: SeverMode } = {}): void {
    for (const connection of this.connections) if (connection.open) connection.sever(options);
  }

  /** Replace the fault rules; applies to frames whose header arrives from now on. */
  setFaults(faults: FrameProxyOptions['faults']): void {
    this.#rules = parseFaults(faults);
  }

  /**
   * Keep the frames that match `rule` in flight until `release()`: a barrier
   * for race tests. Frames behind a held one in the same direction of the
   * same connection queue behind it (order is kept); the other direction
   * flows. A held frame is not faulted. Returns the hold, with
   * `waitHeld(n)`, `held` and `release()`.
   *
   * @example
   * const gate = proxy.hold({ direction: 's2c', frame: 1 });
   * await gate.waitHeld();
   * gate.release();
   */
  hold(rule: HoldRule = {}): FrameHold {
    const where = 'proxy.hold()';
    const describe = JSON.stringify(rule ?? {});
    const hold = FrameHold.create(describe, () => {
      this.#holds = this.#holds.filter((r) => r.hold !== hold);
    });
    const parsed = parseHoldRule(rule, hold, where);
    this.#holds.push(parsed);
    this.#waits.track(parsed);
    return hold;
  }

  /** Release every hold made by `hold()`. */
  release(): void {
    for (const rule of [...this.#holds]) rule.hold?.release();
  }

  /**
   * The frames kept by `record: true`, oldest first. Throws an
   * `InvalidOptionError` if the proxy was made without `record`.
   */
  records(): FrameRecord[] {
    return this.#recorder('records').records();
  }

  /**
   * The recorded exchange as text, one line per frame:
   * `    12.3 ms  c2s #3  conn 1  42 B  {"method":"ping"…}  DROPPED`.
   * Print it when a test fails. Throws if the proxy was made without `record`.
   */
  timeline(): string {
    return this.#recorder('timeline').timeline();
  }

  #recorder(method: string): Recorder {
    const recorder = this.#settings.recorder;
    if (!recorder) {
      throw new InvalidOptionError(
        `proxy.${method}() needs a proxy made with \`record: true\` (createFrameProxy({ …, record: true })).`,
      );
    }
    return recorder;
  }

  /** The clock's time; with the real clock, at sub-millisecond resolution. */
  #now(): number {
    return this.#settings.clock === realClock ? performance.now() : this.#settings.clock.now();
  }

  /**
   * Resolve once `n` frames have been forwarded that way (all connections);
   * reject with a `WaitTimeoutError` after `timeoutMs` (default 4000 ms,
   * below the 5 s test timeout of vitest and jest). A wait that can no longer
   * be met rejects at once: with a `DisposedError` once the proxy is closed,
   * and under `proxyStdio()` with a `StreamEndedError` that says how the
   * child ended once nothing more can go that way.
   */
  async waitForFrames(
    direction: Way,
    n: number,
    options: { timeoutMs?: number } = {},
  ): Promise<void> {
    const where = 'proxy.waitForFrames()';
    checkWay(direction, where);
    if (!Number.isInteger(n) || n < 0) {
      throw new InvalidOptionError(
        `Expected the frame count of ${where} to be an integer >= 0, got ${describeValue(n)}.`,
      );
    }
    checkOptionKeys(options, ['timeoutMs'], where);
    const timeoutMs = checkMs(where, 'timeoutMs', options.timeoutMs, DEFAULT_WAIT_MS);
    await this.#waits.wait(direction, n, timeoutMs);
  }

  /** @internal proxyStdio(): nothing more can go `way` (`how` says why); waits on it that are not met reject. */
  endWaits(way: Way, how: string): void {
    this.#waits.endWay(way, how);
  }

  /**
   * Let the listening proxy keep the process alive, like `server.ref()`: for
   * a process whose whole job is the proxy. By default it does not
   * (requirement SP-10), so a proxy a test forgot to close never holds the runner open.
   */
  ref(): this {
    if (!this.#closed) this.#server?.ref();
    return this;
  }

  /** Undo `ref()`: the proxy no longer keeps the process alive (the default). */
  unref(): this {
    this.#server?.unref();
    return this;
  }

  /** Stop accepting, close every connection, remove the socket file. Counters stay readable. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    untrackLeak(this.#leak);
    this.#forgetExit();
    for (const connection of this.connections) connection.destroy();
    this.#waits.close();
    const server = this.#server;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    this.#unrecord();
    this.emit('close');
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** The exit hook: the same as `close()`, synchronously (closing a Unix server unlinks its file). */
  #closeNow(): void {
    this.#closed = true;
    for (const connection of this.connections) connection.destroy();
    this.#waits.close();
    this.#server?.close();
    this.#unrecord();
  }

  #report(error: Error): void {
    this.#errors.push(error);
    if (this.listenerCount('error') > 0) this.emit('error', error);
  }

  /**
   * @internal proxyStdio(): carry one pair of streams, as an accepted
   * connection; `onWayDone` hears when a direction can carry nothing more.
   */
  attach(client: Duplex, upstream: Duplex, onWayDone?: (way: Way) => void): ProxyConnection {
    const id = ++this.#accepted;
    if (onWayDone) this.#onWayDone.set(id, onWayDone);
    const connection = ProxyConnection.open(id, client, upstream, this.#host());
    this.connections.push(connection);
    this.emit('connection', connection);
    return connection;
  }

  #accept(accepted: Socket): void {
    const id = ++this.#accepted;
    // Reads into the proxy's own buffers (see OwnReads), where no user code sees them.
    const { framing } = this.#settings;
    const own =
      process.platform !== 'win32' && !(framing.kind === 'split' && framing.userCodeSeesReads)
        ? { c2s: new OwnReads(), s2c: new OwnReads() }
        : undefined;
    const adopted = own && adoptAccepted(accepted, own.c2s);
    const client = adopted ?? accepted;
    const reads = own && { ...(adopted ? { c2s: own.c2s } : {}), s2c: own.s2c };
    const onread = reads ? { onread: reads.s2c.onread } : {};
    const upstream =
      this.#upstream.kind !== 'tcp'
        ? connect({ path: this.#upstream.path, allowHalfOpen: true, ...onread })
        : connect({
            host: this.#upstream.host,
            port: this.#upstream.port,
            allowHalfOpen: true,
            ...onread,
          });
    // Neither side keeps the process alive by itself (SP-10): the peers' own sockets do.
    client.unref();
    upstream.unref();
    const failed = (error: Error) => {
      client.destroy();
      this.#report(new UpstreamConnectError(formatAddress(this.#upstream), id, error));
    };
    upstream.once('error', failed);
    upstream.once('connect', () => {
      upstream.off('error', failed);
      if (client.destroyed || this.#closed) {
        upstream.destroy();
        return;
      }
      const connection = ProxyConnection.open(id, client, upstream, this.#host(), reads);
      this.connections.push(connection);
      this.emit('connection', connection);
      client.resume();
    });
  }

  #host(): ConnectionHost {
    const self = this;
    return connectionHost(this, {
      settings: this.#settings,
      total: this.#total,
      get rules() {
        return self.#rules;
      },
      get holds() {
        return self.#holds;
      },
      get frameListeners() {
        return self.#frameListeners;
      },
      now: () => this.#now(),
      started: this.#started,
      report: (error) => this.#report(error),
      wayDone: (connection, way) => this.#onWayDone.get(connection)?.(way),
    });
  }
}

/** `12 frames (3.0 KiB) queued c2s (delay 480 ms left, 1 held by hold())`, or nothing. */
function queuedLine(open: readonly ProxyConnection[], way: Way): string[] {
  let frames = 0;
  let bytes = 0;
  let held = 0;
  let delayMs = 0;
  for (const connection of open) {
    const q = connection.queued(way);
    frames += q.frames;
    bytes += q.bytes;
    held += q.held;
    delayMs = Math.max(delayMs, q.delayMs);
  }
  if (bytes === 0 && frames === 0) return [];
  const why: string[] = [];
  if (delayMs > 0) why.push(`delay ${Math.ceil(delayMs)} ms left`);
  if (held > 0) why.push(`${held} held by hold()`);
  const what = frames > 0 ? `${count(frames, 'frame')} (${sizeText(bytes)})` : sizeText(bytes);
  return [`${what} queued ${way}${why.length > 0 ? ` (${why.join(', ')})` : ''}`];
}

function checkWay(direction: unknown, where: string): Way {
  if (direction === 'c2s' || direction === 's2c') return direction;
  throw new InvalidOptionError(
    `Expected the direction of ${where} to be "c2s" or "s2c", got ${describeValue(direction)}.`,
  );
}

/** `tcp:<port>` or `unix:<path>` of an address, for the leak sanitizer's fd report. */
function endpointOf(address: unknown): string {
  if (typeof address === 'string') return `unix:${address}`;
  const a = address as { port?: number; path?: string; kind?: string };
  if (typeof a?.path === 'string') return `unix:${a.path}`;
  return `tcp:${a?.port ?? ''}`;
}

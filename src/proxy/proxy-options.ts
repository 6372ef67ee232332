import type { Address } from './address.js';
import type { Clock } from './clock.js';
import type { ConnectionStats } from './connection.js';
import type { WayCount } from './counters.js';
import type { FaultAction, FaultRule, SeedFaultPlan, Way } from './faults.js';
import type { Framing } from './framing.js';
import type { RecordOptions } from './recorder.js';
import type { Framer } from './splitter.js';

/**
 * Options of {@link createFrameProxy}. `L` is the type of `listen`; it decides
 * the type of `proxy.address`.
 */
export interface FrameProxyOptions<L extends Address = Address> {
  /**
   * Where clients connect: an absolute Unix socket path, or `{ host, port }`
   * (port 0 picks a free one; `host` defaults to `'127.0.0.1'`).
   * @example join(dir, 'proxy.sock')
   */
  listen: L;
  /**
   * The real server: an absolute Unix socket path, or `{ host, port }`.
   * @example { host: '127.0.0.1', port: server.address().port }
   */
  upstream: Address;
  /**
   * How frames are delimited. `'u32be'`: a 4-byte big-endian length, then the body;
   * `'u32le'` and `'u16be'` as their names say; `'lines'` (NDJSON, JSON-RPC),
   * `'content-length'` (LSP), `'raw'` (chunks as read): see `Framing`. Or a
   * `Framer` of your own.
   * @default 'u32be'
   */
  framing?: Framing | Framer;
  /**
   * A header declaring more (or a line running longer) closes that connection
   * with a `FrameTooLargeError`. Does not apply to `'raw'`.
   * @default 67108864 (64 MiB)
   */
  maxFrameBytes?: number;
  /**
   * Faults to inject: rules, or the seed plan `{ direction, drop_frame, sever_mid_frame, delay, duplicate_frame }`.
   * @example [{ action: 'drop', direction: 'c2s', frame: 3 }]
   */
  faults?: FaultRule[] | FaultRule | SeedFaultPlan;
  /**
   * Seed for `probability` draws and `corrupt` bit positions: the same seed and traffic give the same faults.
   * @default 1
   */
  seed?: number;
  /**
   * Time source for `delay`, `slice` and `bandwidth`, and the `record`
   * timestamps (inject a fake one to drive them from a test). @default real time
   */
  clock?: Clock;
  /**
   * Bytes a direction may queue behind a delayed or held frame (or waiting
   * for `bandwidth`) before the sender is paused.
   * @default 1048576
   */
  queueLimitBytes?: number;
  /**
   * Bytes per second each direction may carry (both, or per direction), as a
   * slow link would: writes are paced, and the sender is paused once
   * `queueLimitBytes` wait.
   * @example { s2c: 64 * 1024 } // replies at 64 KiB/s, requests at full speed
   * @default unlimited
   */
  bandwidth?: number | { c2s?: number; s2c?: number };
  /**
   * Keep the frames (the last `maxFrames`, each body up to `maxBodyBytes`)
   * with timestamps and the faults applied, for `records()` and
   * `timeline()`, and emit each as a `'record'` event. Every frame is then
   * cut out whole, so the proxy is slower: for tests, not benchmarks.
   * @default false
   */
  record?: boolean | RecordOptions;
}

/** What `proxy.stats()` returns: totals over all connections, and each connection's own. */
export interface FrameProxyStats {
  c2s: WayCount;
  s2c: WayCount;
  faults: Partial<Record<FaultAction, number>>;
  /** Frames the source cut short by ending its stream, per direction: forwarded as bytes, not counted as frames. */
  cutShort: Record<Way, number>;
  connections: ConnectionStats[];
}

/** What a `'fault'` event carries. */
export interface FaultEvent {
  connection: number;
  direction: Way;
  frame: number;
  action: FaultAction;
}

/**
 * What a `'frame'` event carries (emitted only while someone listens), as
 * each frame is passed on: a delayed or held frame when it is queued, not
 * when it leaves (`forwarded()` and `stats()` count what has left).
 */
export interface FrameEvent {
  connection: number;
  direction: Way;
  frame: number;
  length: number;
}

// The frame proxy's vocabulary as plain data: framing names, directions,
// fault rules and per-way counts. Both the frame proxy (src/proxy/, which
// re-exports these where its users find them) and the on-disk protocol
// (src/queue/types.ts: a passthrough's `{ framing, faults }` and its record's
// counts) use them, so neither imports the other. Types only: nothing here
// reaches a bundle.

/**
 * How frames are delimited on the wire, by name:
 * - `'u32be'`: a 4-byte big-endian length, then the body; `'u32le'`: 4 bytes,
 *   little-endian; `'u16be'`: 2 bytes, big-endian (bodies up to 65,535 bytes);
 * - `'lines'`: one frame per line, ending in LF or CR LF (NDJSON, JSON-RPC
 *   over stdio); the body is the line without its ending;
 * - `'content-length'`: header lines with `Content-Length: N`, a blank line,
 *   then N bytes of body (LSP, DAP);
 * - `'raw'`: no framing; each chunk as it was read is a frame.
 *
 * Options that take a `Framing` also take a {@link Framer} of your own.
 */
export type Framing = 'u32be' | 'u32le' | 'u16be' | 'lines' | 'content-length' | 'raw';

/** Which way a frame travels: client to server, server to client, or either. */
export type Direction = 'c2s' | 's2c' | 'both';
/** One way a frame travels: `'c2s'` (client to server) or `'s2c'` (server to client). */
export type Way = Exclude<Direction, 'both'>;

/** Which frames a rule targets: one (1-based), every k-th, or a range (inclusive). */
export type FrameSelector = number | { every: number } | { from: number; to?: number };

/** What a fault rule does to the frames it targets (see the README's table). */
export type FaultAction =
  | 'drop'
  | 'duplicate'
  | 'delay'
  | 'corrupt'
  | 'truncate'
  | 'reorder'
  | 'sever-mid-frame'
  | 'sever-after'
  | 'reset'
  | 'slice';

/**
 * One fault: what to do to which frames.
 *
 * @example
 * { action: 'drop', direction: 'c2s', frame: 3 }                 // the 3rd client frame of every connection
 * { action: 'delay', direction: 's2c', frame: { every: 1 }, delayMs: 50 }
 * { action: 'sever-mid-frame', direction: 'c2s', connection: 2, frame: 1 }
 */
export interface FaultRule {
  action: FaultAction;
  /** @default 'both' */
  direction?: Direction;
  /** 1-based connection number in accept order. @default every connection */
  connection?: number;
  /** Frame(s), 1-based, counted per connection per direction. @default every frame */
  frame?: FrameSelector;
  /** Chance (0–1) that a targeted frame is hit; reproducible with the proxy's `seed`. @default 1 */
  probability?: number;
  /**
   * What one `probability` draw decides: each frame on its own (`'frame'`),
   * or a whole connection (`'connection'`: every targeted frame of a
   * connection is hit, or none is).
   * @default 'frame'
   */
  per?: 'frame' | 'connection';
  /**
   * `delay`: how long to hold the frame (later frames that way queue behind
   * it). `slice`: the pause between two pieces (default 1 ms; with 0 they are
   * back-to-back writes, which the kernel may join into one read).
   */
  delayMs?: number;
  /** `corrupt`: how many body bits to flip. @default 1 */
  bits?: number;
  /** `truncate` / `sever-mid-frame`: body bytes kept before the cut. @default half the body */
  keepBytes?: number;
  /** `slice`: the size of each piece the frame is written in. @default 1 */
  sliceBytes?: number;
  /** `sever-mid-frame` / `sever-after`: close with FIN (a clean end) or RST (a reset, over TCP). @default 'fin' */
  mode?: 'fin' | 'rst';
}

/**
 * The seed's fault plan: one direction for all, 1-based frame numbers.
 * Means the same as the equivalent rules.
 *
 * @example
 * { direction: 'c2s', drop_frame: 2, delay: 50 }
 */
export interface SeedFaultPlan {
  direction: Direction;
  drop_frame?: number;
  sever_mid_frame?: number;
  /** Milliseconds (or `"50ms"`) added to every frame that way. */
  delay?: number | string;
  duplicate_frame?: number;
}

/** Frames and bytes forwarded one way. */
export interface WayCount {
  /** Whole frames forwarded. */
  frames: number;
  /** Bytes forwarded, headers included. */
  bytes: number;
}

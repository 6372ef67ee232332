import { ShimkitError } from '../internal/errors.js';
import type { Direction } from './faults.js';
import { count } from './words.js';

/**
 * A frame header declared more than `maxFrameBytes` (or, for `lines` and
 * custom framings, a frame ran past it with no end in sight). The proxy
 * closes both directions of that connection without allocating the body;
 * other connections carry on.
 */
export class FrameTooLargeError extends ShimkitError {
  /** 1-based connection number, in accept order. */
  readonly connection: number;
  readonly direction: Exclude<Direction, 'both'>;
  /** 1-based index of the frame in that direction of that connection. */
  readonly frame: number;
  /** The body length the header declares, or (with `atLeast`) the bytes seen so far. */
  readonly declaredLength: number;
  /** Whether `declaredLength` is only a lower bound: the frame's end had not arrived. */
  readonly atLeast: boolean;
  readonly maxFrameBytes: number;

  constructor(details: {
    connection: number;
    direction: Exclude<Direction, 'both'>;
    frame: number;
    declaredLength: number;
    atLeast?: boolean;
    maxFrameBytes: number;
  }) {
    super(
      'ERR_SHIMKIT_FRAME_TOO_LARGE',
      `Frame ${details.frame} (${details.direction}) on proxy connection ${details.connection} ${sizeClause(details.declaredLength, details.atLeast)}, more than maxFrameBytes ${details.maxFrameBytes}; the connection was closed. Raise maxFrameBytes if such frames are legitimate.`,
    );
    this.connection = details.connection;
    this.direction = details.direction;
    this.frame = details.frame;
    this.declaredLength = details.declaredLength;
    this.atLeast = details.atLeast ?? false;
    this.maxFrameBytes = details.maxFrameBytes;
  }
}

function sizeClause(length: number, atLeast: boolean | undefined): string {
  return atLeast
    ? `has ${count(length, 'byte')} and no end yet`
    : `declares ${count(length, 'byte')}`;
}

/**
 * The bytes on a proxy connection are not in its framing: a
 * `Content-Length` header block without that header, or a custom framer
 * that threw. The proxy closes that connection; others carry on.
 */
export class FrameMalformedError extends ShimkitError {
  /** 1-based connection number, in accept order. */
  readonly connection: number;
  readonly direction: Exclude<Direction, 'both'>;
  /** 1-based index of the frame in that direction of that connection. */
  readonly frame: number;
  /** What was wrong with the bytes. */
  readonly reason: string;

  constructor(details: {
    connection: number;
    direction: Exclude<Direction, 'both'>;
    frame: number;
    framing: string;
    reason: string;
  }) {
    super(
      'ERR_SHIMKIT_FRAME_MALFORMED',
      `Frame ${details.frame} (${details.direction}) on proxy connection ${details.connection} cannot be read as ${details.framing}: ${details.reason}; the connection was closed. Check that both peers speak this framing.`,
    );
    this.connection = details.connection;
    this.direction = details.direction;
    this.frame = details.frame;
    this.reason = details.reason;
  }
}

/** The proxy could not connect to its upstream for a new client; that client was closed. */
export class UpstreamConnectError extends ShimkitError {
  /** The upstream address, as a socket path or `host:port`. */
  readonly upstream: string;
  readonly connection: number;

  constructor(upstream: string, connection: number, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(
      'ERR_SHIMKIT_UPSTREAM_CONNECT',
      `Proxy connection ${connection}: cannot connect to upstream ${upstream} (${reason}); the client connection was closed. Is the server listening there?`,
      { cause },
    );
    this.upstream = upstream;
    this.connection = connection;
  }
}

/**
 * The proxy could not listen where it was told: the socket's dir does not
 * exist or is not writable, the port is taken, the host is not this
 * machine's. The message names the address and says what to do.
 */
export class ProxyListenError extends ShimkitError {
  /** The listen address, as a socket path or `host:port`. */
  readonly address: string;
  /** The errno code, such as `ENOENT` or `EADDRINUSE`. */
  readonly errno: string | undefined;

  constructor(message: string, address: string, errno: string | undefined, cause: unknown) {
    super('ERR_SHIMKIT_PROXY_LISTEN', message, { cause });
    this.address = address;
    this.errno = errno;
  }
}

/**
 * A `FrameDecoder` (or `FrameReader`) read a header that declares more than
 * its `maxFrameBytes`, a frame that ran past it, or bytes that are not in its
 * framing (`reason`): the stream is out of step (the peer speaks another
 * framing, or bytes were lost), or the peer sends frames larger than allowed.
 * The decoder stops there; every later `push()` throws this error again.
 */
export class FrameDecodeError extends ShimkitError {
  /** 1-based index of the frame whose header was read. */
  readonly frame: number;
  /** The length the header declares (or, with `atLeast`, the bytes seen so far); undefined with a `reason`. */
  readonly declaredLength: number | undefined;
  /** Whether `declaredLength` is only a lower bound: the frame's end had not arrived. */
  readonly atLeast: boolean;
  readonly maxFrameBytes: number;
  /** What was wrong with the bytes, when it was not their length. */
  readonly reason: string | undefined;

  constructor(details: {
    frame: number;
    declaredLength?: number;
    atLeast?: boolean;
    maxFrameBytes: number;
    reason?: string;
    framing?: string;
  }) {
    super(
      'ERR_SHIMKIT_FRAME_DECODE',
      details.reason !== undefined
        ? `Frame ${details.frame} cannot be read as ${details.framing ?? 'this framing'}: ${details.reason}; decoding stopped. Check that the peer speaks this framing.`
        : `Frame ${details.frame} ${sizeClause(details.declaredLength ?? 0, details.atLeast)}, more than maxFrameBytes ${details.maxFrameBytes}; decoding stopped. Check that the peer speaks this framing, or raise maxFrameBytes if such frames are legitimate.`,
    );
    this.frame = details.frame;
    this.declaredLength = details.declaredLength;
    this.atLeast = details.atLeast ?? false;
    this.maxFrameBytes = details.maxFrameBytes;
    this.reason = details.reason;
  }
}

/** The stream a `FrameReader` reads ended, or failed, while `waitForFrames()` still waited. */
export class StreamEndedError extends ShimkitError {
  /** Whole frames received before the end. */
  readonly received: number;
  /** Frames that were awaited. */
  readonly expected: number;

  constructor(message: string, received: number, expected: number, cause?: unknown) {
    super('ERR_SHIMKIT_STREAM_ENDED', message, cause === undefined ? undefined : { cause });
    this.received = received;
    this.expected = expected;
  }
}

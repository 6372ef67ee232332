import { ShimkitError } from '../internal/errors.js';
import type { Direction } from './faults.js';
import { count } from './words.js';

/**
 * A frame header declared more than `maxFrameBytes`. The proxy closes both
 * directions of that connection without allocating the body; other
 * connections carry on.
 */
export class FrameTooLargeError extends ShimkitError {
  /** 1-based connection number, in accept order. */
  readonly connection: number;
  readonly direction: Exclude<Direction, 'both'>;
  /** 1-based index of the frame in that direction of that connection. */
  readonly frame: number;
  readonly declaredLength: number;
  readonly maxFrameBytes: number;

  constructor(details: {
    connection: number;
    direction: Exclude<Direction, 'both'>;
    frame: number;
    declaredLength: number;
    maxFrameBytes: number;
  }) {
    super(
      'ERR_SHIMKIT_FRAME_TOO_LARGE',
      `Frame ${details.frame} (${details.direction}) on proxy connection ${details.connection} declares ${count(details.declaredLength, 'byte')}, more than maxFrameBytes ${details.maxFrameBytes}; the connection was closed. Raise maxFrameBytes if such frames are legitimate.`,
    );
    this.connection = details.connection;
    this.direction = details.direction;
    this.frame = details.frame;
    this.declaredLength = details.declaredLength;
    this.maxFrameBytes = details.maxFrameBytes;
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
 * its `maxFrameBytes`: the stream is out of step (the peer speaks another
 * framing, or bytes were lost), or the peer sends frames larger than allowed.
 * The decoder stops there; every later `push()` throws this error again.
 */
export class FrameDecodeError extends ShimkitError {
  /** 1-based index of the frame whose header was read. */
  readonly frame: number;
  readonly declaredLength: number;
  readonly maxFrameBytes: number;

  constructor(details: { frame: number; declaredLength: number; maxFrameBytes: number }) {
    super(
      'ERR_SHIMKIT_FRAME_DECODE',
      `Frame ${details.frame} declares ${count(details.declaredLength, 'byte')}, more than maxFrameBytes ${details.maxFrameBytes}; decoding stopped. Check that the peer speaks this framing, or raise maxFrameBytes if such frames are legitimate.`,
    );
    this.frame = details.frame;
    this.declaredLength = details.declaredLength;
    this.maxFrameBytes = details.maxFrameBytes;
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

/**
 * The shapes a TestProcess shares with its helpers (output, interaction,
 * option checks), in a file of their own so that none of them imports the
 * TestProcess class.
 */

/** How a process ended. */
export interface ProcessExit {
  /** The exit code, or `null` when a signal ended the process. */
  exitCode: number | null;
  /** The signal that ended the process, or `null`. */
  signal: NodeJS.Signals | null;
  /** From spawn to exit. */
  durationMs: number;
}

/** What `wait()` found: the exit, or that the deadline passed first (the process still runs). */
export type WaitResult = (ProcessExit & { timedOut: false }) | { timedOut: true };

/** One output stream of a TestProcess, kept as a bounded tail. */
export interface OutputStream {
  /** The last `tailBytes` bytes as UTF-8 text. */
  tail(): string;
  /** The last `tailBytes` bytes. */
  bytes(): Buffer;
  /** Bytes written in all. */
  readonly totalBytes: number;
  /** Bytes that fell out of the front of the tail (exact). */
  readonly droppedBytes: number;
}

/** Which output a matcher reads: one stream, or both in the order their chunks arrived (see `output()`). */
export type OutputSource = 'stdout' | 'stderr' | 'all';

/** What the interaction helpers (`respond`, `send`) need from the process they script (not exported). */
export interface InteractiveProcess {
  /** Whether the process has not exited yet. */
  readonly running: boolean;
  /** Throws unless input can reach the process now (stdin a pipe, open, process running); `what` names the method, e.g. `'send()'`. */
  assertWritable(what: string): void;
  /** Write to stdin (ignored once stdin is closed). */
  stdinWrite(data: string | Uint8Array): void;
  /** Close stdin. */
  stdinEnd(): void;
  /** An error saying the process ended `what`, with its output tail. */
  endedError(what: string): Error;
}

import type { WireMatcher } from '../internal/matcher.js';
import type {
  FaultAction,
  FaultRule,
  Framing,
  SeedFaultPlan,
  WayCount,
} from '../internal/wire/frames.js';
/**
 * What is stored on disk. These are wire formats: plain JSON, validated by
 * the writer, so the runner can trust their shape and stay small.
 */

/**
 * One scripted response: what a single call of the mock does.
 *
 * @example
 * git.enqueue({ stdout: 'main\n' });
 * git.enqueue({ stderr: 'fatal: not a git repository\n', exitCode: 128 });
 * git.enqueue({ delayMs: 200, writeFiles: { '.git/HEAD': 'ref: refs/heads/main\n' } });
 */
export interface MockResponse {
  /**
   * Which calls this response is for (routing). A call claims the first
   * unclaimed response whose `match` fits; a response without one fits any
   * call. See {@link MockMatch}.
   *
   * @example
   * git.enqueue({ match: { args: ['push', any()] }, stderr: 'rejected\n', exitCode: 1 });
   */
  match?: MockMatch;
  /**
   * How many calls this response answers: a count, or `'always'` (every
   * call it fits, and it is never used up).
   * @default 1
   */
  times?: number | 'always';
  /** `assertDone()` (and a strict mock's `dispose()`) does not ask for this response to be used. */
  optional?: boolean;
  /** Text written to stdout (UTF-8). Flushed whole before the call exits. */
  stdout?: string;
  /** Text written to stderr (UTF-8). */
  stderr?: string;
  /** Bytes written to stdout, base64-encoded (for binary output). Not with `stdout`. */
  stdoutBase64?: string;
  /** Bytes written to stderr, base64-encoded. Not with `stderr`. */
  stderrBase64?: string;
  /**
   * Exit code, 0–255; none is reserved for shimkit.
   * @default 0
   */
  exitCode?: number;
  /**
   * Wait this long before writing files and output. A delay that reaches past
   * the mock's `timeoutMs` ends the call with the timeout diagnostic instead
   * (any finite delay is accepted, so a test can script a hang).
   * @default 0
   */
  delayMs?: number;
  /**
   * Run the real command instead (found on PATH after the mock's own dir):
   * same argv, stdin, stdout, stderr, exit code or signal; the call is
   * recorded as usual. Other output fields are not allowed with it.
   *
   * With `{ framing, faults }`, its stdin and stdout run through a frame
   * proxy (requirement PX-14): a program that spawns `my-mcp-server` talks to
   * the real one, with frames dropped, delayed or severed on cue. Stdin then
   * streams as the program writes it (it is not captured for the record).
   *
   * @example
   * { passthrough: { framing: 'lines', faults: [{ action: 'drop', direction: 's2c', frame: 2 }] } }
   */
  passthrough?: boolean | PassthroughFaults;
  /** Values written to stdout as one JSON line each, after `stdout`. */
  jsonl?: unknown[];
  /**
   * Output streamed after `stdout`, `stderr` and `jsonl`, each piece after
   * its own `delayMs`, so a reader sees them arrive apart.
   *
   * @example
   * { chunks: [{ stdout: 'Cloning…\n' }, { stderr: '50%\n', delayMs: 100 }, { stdout: 'done\n', delayMs: 100 }] }
   */
  chunks?: MockChunk[];
  /**
   * End by this signal after the output, as a crashed or killed command
   * does: the caller sees `signal` set and no exit code (POSIX; on Windows
   * the call exits 1).
   */
  signal?: MockSignal;
  /**
   * Never exit after the output: the call runs until it is killed, or until
   * the mock's `timeoutMs` ends it with the timeout diagnostic.
   */
  hang?: boolean;
  /** `'capture'` or `'ignore'` stdin for this call, whatever the mock's `stdin` option says. */
  stdin?: 'capture' | 'ignore';
  /**
   * After the output, wait until the caller closes stdin, then exit (as a
   * server on stdio does when its client goes).
   */
  exitAfterStdinEof?: boolean;
  /**
   * Files to write before output: path → UTF-8 content. Relative paths resolve
   * against the call's cwd; parent dirs are created. Paths may point anywhere
   * the call can write (absolute paths, `..`): they are the program under
   * test's files, not shimkit's.
   */
  writeFiles?: Record<string, string>;
}

/** One piece of streamed output (see `MockResponse.chunks`). */
export interface MockChunk {
  stdout?: string;
  stderr?: string;
  /** Wait this long before writing it. @default 0 */
  delayMs?: number;
}

/** The signals a response can end by: those that end a Node process by default. */
export const MOCK_SIGNALS = [
  'SIGTERM',
  'SIGINT',
  'SIGKILL',
  'SIGHUP',
  'SIGQUIT',
  'SIGABRT',
  'SIGSEGV',
  'SIGBUS',
  'SIGFPE',
  'SIGILL',
  'SIGALRM',
  'SIGUSR2',
  'SIGPIPE',
] as const;
export type MockSignal = (typeof MOCK_SIGNALS)[number];

/** `any()`: an argument (or cwd, or env var) that is there, with any value. */
export interface AnyValue {
  readonly any: true;
}

/** One argument as a matcher expects it: exactly this string, a RegExp it must match, or `any()`. */
export type ArgMatcher = string | RegExp | AnyValue;

/**
 * Which calls a response is for. Every part given must fit.
 *
 * @example
 * { args: ['-C', any(), 'push'] }          // exactly these three arguments
 * { argsPrefix: ['remote', /^(add|set-url)$/] } // these first, anything after
 * { cwd: /\/r5$/, env: { GIT_DIR: any(), CI: null } } // CI must be unset
 */
export interface MockMatch {
  /** The arguments, exactly: as many as given, each fitting its matcher. */
  args?: readonly ArgMatcher[];
  /** The first arguments; any may follow. Not with `args`. */
  argsPrefix?: readonly ArgMatcher[];
  /** The call's working dir. */
  cwd?: string | RegExp | AnyValue;
  /** Env vars of the call; `null` means the var must be unset. */
  env?: Readonly<Record<string, string | RegExp | AnyValue | null>>;
}

/** A matcher element as stored: a RegExp is `{ regex, flags }`. */
export type WireArg = WireMatcher;

/** `MockMatch` as stored in a queue line. */
export interface WireMatch {
  args?: WireArg[];
  argsPrefix?: WireArg[];
  cwd?: WireArg;
  env?: Record<string, WireArg | null>;
}

/**
 * One line of `queue.jsonl`: a validated `MockResponse` as JSON, except that
 * large parts are kept in files of the generation's `out/` dir so a call
 * reads only its own response: the bytes of stdout (from `stdout`,
 * `stdoutBase64` and `jsonl`) in `stdoutFile`, of stderr in `stderrFile`,
 * and the `writeFiles` map as JSON in `writeFilesFile`; and a `match` keeps
 * its RegExps as `{ regex, flags }`.
 */
export interface WireResponse extends Omit<MockResponse, 'match'> {
  match?: WireMatch;
  stdoutFile?: string;
  stderrFile?: string;
  writeFilesFile?: string;
}

/** The protocol version in `state.json`; a runner refuses state of another version. */
export const PROTOCOL_VERSION = 2;

/** What the POSIX shim's fast path can use, found when the mock is made (see src/mock-binary/sh-tools.ts). */
export interface ShCapabilities {
  /** `sleep` takes fractions of a second (GNU, BSD, busybox), only whole seconds, or is missing. */
  sleep: 'fractions' | 'seconds' | 'none';
  /** `mkdir -p` is there, for files in dirs that may not exist. */
  mkdir: boolean;
}

/** The mock's options as stored in `state.json`. */
export interface WireConfig {
  version: typeof PROTOCOL_VERSION;
  name: string;
  timeoutMs: number;
  onExhausted: 'repeat' | 'fail' | { response: WireResponse };
  default?: WireResponse;
  recordEnv: boolean | string[];
  stdin: 'capture' | 'ignore';
  stdinLimitBytes: number;
  /** Capture ends once no stdin came for this long (0: only at EOF). */
  stdinIdleMs?: number;
  /** A spy: calls no queued response is left for run the real command. */
  spy?: boolean;
  /** Record mode (a cassette): passed-through calls keep the real command's output in their record. */
  recordOutput?: boolean;
  /** Replay mode: the cassette replayed, for the diagnostic of a call that is not in it. */
  cassette?: string;
  /**
   * The leak sanitizer's cookie (LK-01) open when the mock was made: a
   * passthrough whose call's env lacks one gives this one to the real command.
   */
  leakCookie?: string;
  /**
   * The id of the leak sanitizer's record of the mock's dir (LK-01): a
   * passthrough gives it to the real command as `SHIMKIT_LEAK_ORIGIN`, so a
   * process it leaves behind names the mock even once its parents are gone.
   */
  leakOrigin?: number;
  /**
   * The POSIX shim serves static responses itself (requirement PERF-07), with
   * what it found on this machine; absent: every call runs the runner.
   */
  sh?: ShCapabilities;
  /**
   * Test hook: the runner stops itself (SIGSTOP) at this step of the protocol,
   * so a test can kill a call at an exact point. Never set by the public API.
   */
  stopAt?: CallStep;
}

/** The steps of a call, in order (see src/queue/claim.ts). */
export type CallStep = 'started' | 'recorded' | 'claimed' | 'decided' | 'served';

/** `state.json`: the live generation and the mock's options, read by every call. */
export interface WireState {
  generation: string;
  config: WireConfig;
}

/** Where the response a call used came from. */
export type ResponseSource =
  | 'queue'
  | 'repeat'
  | 'fallback'
  | 'default'
  | 'passthrough'
  | 'handler'
  | 'none';

/**
 * The mode a call gives its record file when it could not append its last
 * line (a full disk): it then exits with the `broken` code, and readers
 * report it as failed instead of killed. Records are otherwise 0600.
 */
export const RECORD_UNFINISHED_MODE = 0o400;

/** How a call ended, as far as the call itself could record it. */
export type CallStatus = 'running' | 'exited' | 'timed-out' | 'unmatched' | 'failed';

/**
 * `calls/<n>.json`, merged: the file holds one JSON line when the call
 * starts, one when it has claimed, one when it ends; later lines win. `seq`
 * is `n`, from the file name.
 */
export interface WireCallRecord {
  seq: number;
  /** Unique per call (pid and a random part): ties a claim marker to its call. */
  id: string;
  argv: string[];
  /** The arguments' raw bytes, only when UTF-8 decoding of argv was lossy. */
  argvBase64?: string[];
  cwd: string;
  pid: number;
  ppid: number;
  startedAt: number;
  endedAt?: number;
  /** How long claiming a response took, from the call's first look at the queue. */
  claimMs?: number;
  status: CallStatus;
  source?: ResponseSource;
  /** 1-based queue position of the response used (queue and repeat sources). */
  response?: number;
  exitCode?: number;
  /** The signal the call ended by (a scripted `signal`, a real command's, SIGPIPE at a closed pipe). */
  signal?: string;
  /** The one-line diagnostic the shim printed, for timed-out, unmatched and failed calls. */
  diagnostic?: string;
  env?: Record<string, string>;
  stdinBase64?: string;
  stdinTruncated?: boolean;
  /** The capture ended by `stdinIdleMs`, with the caller's stdin still open. */
  stdinOpen?: boolean;
  /** Record mode: what the real command wrote to stdout and stderr. */
  stdoutBase64?: string;
  stderrBase64?: string;
  /** `passthrough` with faults: what the proxy on the real command's stdio forwarded and did. */
  proxy?: PassthroughStats;
}

/** What a `passthrough: { faults }` call's proxy forwarded each way, and the faults it applied. */
export interface PassthroughStats {
  c2s: WayCount;
  s2c: WayCount;
  faults: Partial<Record<FaultAction, number>>;
}

/**
 * `passthrough` with a frame proxy on the real command's stdin and stdout
 * (c2s: to it, s2c: from it). Stdin streams through as it comes; with
 * `stdin: 'capture'` the record also keeps it as the caller wrote it, before
 * any fault (up to `stdinLimitBytes`).
 */
export interface PassthroughFaults {
  /** A framing name (a custom `Framer` cannot reach the shim). @default 'u32be' */
  framing?: Framing;
  /** Rules, one rule, or the seed plan, as for `createFrameProxy`. */
  faults?: FaultRule[] | FaultRule | SeedFaultPlan;
  /** @default 1 */
  seed?: number;
  /** @default 67108864 (64 MiB) */
  maxFrameBytes?: number;
}

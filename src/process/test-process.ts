import type { ChildProcess } from 'node:child_process';
import { describeValue, truncate } from '../internal/describe.js';
import { InvalidOptionError } from '../internal/errors.js';
import { holdLines, secondsText, sizeText } from '../internal/leak-lines.js';
import {
  LEAK_ORIGIN_VAR,
  reserveLeakId,
  type Tracked,
  trackLeak,
  untrackLeak,
} from '../internal/leak-registry.js';
import { sweepOnce } from '../internal/leftovers/sweep.js';
import { readStat } from '../internal/proc.js';
import { formatCommand } from '../queue/format.js';
import { ChildExit } from './exit.js';
import {
  Interaction,
  type Responder,
  type RespondOptions,
  type SendOptions,
} from './interaction.js';
import { Keepalive } from './keepalive.js';
import { groupAlive, killSession, signalGroup } from './kill.js';
import {
  type ResolvedSpawn,
  resolveCloseOptions,
  resolveSpawn,
  resolveWaitForOutputOptions,
  resolveWaitOptions,
  type SpawnProcessOptions,
} from './options.js';
import { ProcessOutput } from './output.js';
import { NotATerminalError } from './pty/errors.js';
import { formatForeground, terminalForeground } from './pty/foreground.js';
import type { ScreenSnapshot } from './pty/screen.js';
import { PtySession } from './pty/session.js';
import { endTree, killTreeOnExit, treeGone } from './reap.js';
import { spawnChild } from './spawn.js';
import { ProcessStdin } from './stdin.js';
import type { OutputSource, OutputStream, ProcessExit, WaitResult } from './types.js';

export type { OutputSource, OutputStream, ProcessExit, WaitResult } from './types.js';

/** The bound on reading a PTY helper's pipes after it exited (they close with it). */
const PTY_PIPE_DRAIN_MS = 10_000;

/**
 * A program under test, started by `spawnProcess()`: its own process group,
 * bounded output tails, deadlines that do not kill, and a `close()` that ends
 * the whole tree. Cleaned up when the test process exits unless `keep: true`.
 *
 * A process the test forgets to close never keeps the test runner (vitest,
 * jest, node:test) from exiting: Node is kept alive for it only while
 * `wait()`, `waitForOutput()`, `send()`, `close()` or `run()` is pending, and
 * the exit hook ends its tree when the runner exits (requirement SP-10). A `wait()`
 * without `timeoutMs` that is never awaited therefore still holds Node until
 * the process exits.
 *
 * @example
 * await using server = spawnProcess('node', ['server.js'], { sandbox: sb });
 * await server.waitForOutput(/listening on (\d+)/, { timeoutMs: 5000 });
 * // … talk to it …
 * const exit = await server.close(); // SIGTERM the group, SIGKILL after graceMs
 */
export class TestProcess {
  /** The pid; on POSIX also the process group id. `0` if the OS refused to start it. */
  readonly pid: number;
  /** The command as given. */
  readonly command: string;
  readonly args: readonly string[];
  /** The command line, quoted for display: `git commit -m "a b"`. */
  readonly commandLine: string;
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;

  readonly #child: ChildProcess;
  readonly #options: ResolvedSpawn;
  readonly #output: ProcessOutput;
  readonly #ended: ChildExit;
  readonly #stdin: ProcessStdin;
  readonly #interaction: Interaction;
  readonly #keepalive: Keepalive;
  #forgetExitHook: () => void = () => {};
  #untrack: () => void = () => {};
  #closing: Promise<ProcessExit> | undefined;
  /** The leak sanitizer's record of it (LK-02), when started in a sanitizer scope. */
  #leak: Tracked | undefined;
  readonly #pty: PtySession | undefined;
  /** A PTY helper's start time (Linux), which names its session for the kill. */
  #leaderStart = 0;
  /** When it was spawned (performance.now()). */
  readonly #startedAt: number;
  /** Output bytes (stdout and stderr) received when a wait last read it, for the leak report. */
  #readMark = 0;

  /** @internal Use `spawnProcess()`. */
  static create(command: string, args: readonly string[], options: ResolvedSpawn): TestProcess {
    return new TestProcess(command, args, options);
  }

  private constructor(command: string, args: readonly string[], options: ResolvedSpawn) {
    sweepOnce(); // requirement SP-11: what dead test processes left, on the first use
    const started = performance.now();
    this.#startedAt = started;
    this.command = command;
    this.args = args;
    this.commandLine = formatCommand(command, args);
    this.#options = options;
    this.#output = new ProcessOutput(options.tailBytes);
    this.stdout = this.#output.stdout;
    this.stderr = this.#output.stderr;

    // In a sanitizer scope its env names it, for a process it starts whose parents are gone (LK-01).
    const leakId = reserveLeakId();
    if (leakId !== undefined) options.env[LEAK_ORIGIN_VAR] = String(leakId);
    const child = spawnChild(command, args, options);
    this.#child = child;
    this.pid = child.pid ?? 0;
    if (options.pty && this.pid > 0) this.#leaderStart = readStat(this.pid)?.start ?? 0;
    this.#ended = new ChildExit(
      child,
      started,
      { commandLine: this.commandLine, cwd: options.cwd },
      {
        // Grandchildren may live on in the group; the exit hook stays until they are gone.
        onExit: () => {
          if (treeGone(this.pid, options.platform, options.pty !== undefined)) {
            this.#forgetExitHook();
          }
        },
        onError: () => this.#forgetExitHook(),
      },
    );

    this.#keepalive = new Keepalive(child); // requirement SP-10: ref'd only while something is awaited
    this.#stdin = new ProcessStdin(
      child,
      this.#label(),
      options.stdin,
      options.input !== undefined,
      options.pty ? '\x04' : undefined,
      (what) =>
        this.running
          ? undefined
          : this.#endedError(`before ${what} was called, so the input cannot reach it`, 'all'),
    );
    this.#interaction = new Interaction(this, this.#output.windows);
    this.#output.attach(child, () => this.#interaction.output());
    if (options.pty) {
      this.#pty = new PtySession(child, options.pty, this.#label(), (data) =>
        this.#stdin.writeQuietly(data),
      );
    }

    if (this.pid !== 0 && !options.keep) {
      this.#forgetExitHook = killTreeOnExit(
        this.pid,
        options.platform,
        options.pty ? { leaderStart: this.#leaderStart } : undefined,
      );
    }
    if (options.sandbox && this.pid !== 0) this.#untrack = options.sandbox.track(this);
    if (this.pid !== 0) {
      this.#leak = trackLeak(
        options.pty ? 'PTY session' : 'process',
        this.commandLine,
        {
          alive: () => this.running,
          holds: (onProcessLine) => this.leakHolds(onProcessLine),
          dispose: () => this.close(),
          pids: () => [this.pid],
        },
        leakId,
      );
    }
  }

  /** @internal What the leak sanitizer reports of a process still running at the test's end (LK-02). */
  leakHolds(onProcessLine = false): string[] {
    if (!this.running) return [];
    return holdLines({
      'whether it runs': () =>
        onProcessLine ? undefined : `still running (pid ${this.pid}, ${this.#age()})`,
      'its terminal': () => {
        if (!this.#pty) return undefined;
        const found = terminalForeground(this.pid);
        return found === undefined ? undefined : `PTY foreground: ${formatForeground(found)}`;
      },
      'its output': () => {
        const unread = this.#outputBytes() - this.#readMark;
        if (unread <= 0) return undefined;
        return this.#pty
          ? `${sizeText(unread)} of terminal output not read by a wait`
          : `${sizeText(unread)} of output not read by a wait`;
      },
    });
  }

  /** @internal `sleep 600 (pid 4242, 3.1 s)`: a running process in its sandbox's leak report. */
  leakLabel(): string {
    return `${truncate(this.commandLine, 80)} (pid ${this.pid}, ${this.#age()})`;
  }

  #age(): string {
    return secondsText(performance.now() - this.#startedAt);
  }

  #outputBytes(): number {
    return this.stdout.totalBytes + this.stderr.totalBytes;
  }

  /** A wait read the output so far: it is no longer unread (LK-02). */
  #markRead<T>(value: T): T {
    this.#readMark = this.#outputBytes();
    return value;
  }

  /** Whether the process has not exited yet. */
  get running(): boolean {
    return this.#ended.running;
  }

  /** How it ended, once it has. */
  get exit(): ProcessExit | undefined {
    return this.#ended.exit;
  }

  /**
   * stdout and stderr together, in the order their chunks arrived (the last
   * `max(tailBytes, 4096)` characters): what to print when a test fails.
   * They come through two pipes, so no order between them is guaranteed:
   * `echo a; echo b >&2; echo c` may read `a\nc\nb\n`. Where the order
   * matters, have the program write both to one stream (`2>&1`).
   */
  output(): string {
    return this.#output.windows.all.text;
  }

  /**
   * Write to the process's stdin (when it was spawned with `stdin: 'pipe'`, the default).
   *
   * Input that cannot arrive is an error, not a silent loss: throws
   * `StdinNotWritableError` when stdin is not a pipe (`stdin: 'ignore'` or
   * `'inherit'`) or was already closed (by `end()`, `send()` or the `stdin`
   * input), and `ProcessExitedError` once the process has exited (with how it
   * exited and its last output). The same holds for `end()`, `respond()` and
   * `send()`.
   */
  write(data: string | Uint8Array): void {
    this.#stdin.write(data);
  }

  /**
   * Close the process's stdin: it reads end of file (on a `pty`, the
   * terminal's end-of-file character, Ctrl+D, is typed first: a program
   * reading a line reads end of file where that line is empty, as in a
   * terminal). Does nothing when stdin
   * is already closed; throws `ProcessExitedError` once the process has
   * exited and `StdinNotWritableError` when stdin is not a pipe.
   */
  end(): void {
    this.#stdin.end();
  }

  /**
   * Wait for the output so far to match `pattern` (text or a RegExp; `g`/`y`
   * flags are ignored). Resolves with the match; rejects with the output tail
   * in the message when `timeoutMs` passes (default 4000 ms: below the 5 s
   * test timeout of vitest and jest) or the process exits first.
   * The match is looked for in the last `max(tailBytes, 4096)` characters.
   */
  waitForOutput(
    pattern: string | RegExp,
    options?: { timeoutMs?: number; stream?: OutputSource },
  ): Promise<RegExpExecArray> {
    const where = `${this.#label()}.waitForOutput()`;
    const { timeoutMs, stream, matcher } = resolveWaitForOutputOptions(pattern, options, where);
    return this.#keepalive
      .during(
        this.#output.waitFor(
          matcher,
          stream,
          timeoutMs,
          where,
          pattern,
          () => this.#afterOutput(),
          (what, source) => this.#endedError(what, source),
        ),
      )
      .then((match) => this.#markRead(match));
  }

  /**
   * Answer a prompt each time it appears: whenever the output after the last
   * answered prompt matches `pattern`, write `answer` to stdin.
   *
   * @example
   * p.respond(/Continue\? \[y\/N\]/, 'y\n');
   * p.respond(/Password: $/, 'hunter2\n', { stream: 'stderr' });
   */
  respond(
    pattern: string | RegExp,
    answer: string | ((match: RegExpExecArray) => string),
    options?: RespondOptions,
  ): Responder {
    return this.#interaction.respond(pattern, answer, options, `${this.#label()}.respond()`);
  }

  /**
   * Feed `inputs` one at a time, each once the output has been quiet for
   * `idleMs` (since the last output or input), then close stdin (unless
   * `end: false`). Rejects if the process exits before every input was
   * written. Quiet time counts from spawn until the first output, so for a
   * program that starts slowly, `waitForOutput()` its first prompt first.
   *
   * @example
   * await p.waitForOutput('Name?');
   * await p.send(['Ada\n', 'yes\n'], { idleMs: 300 });
   * await p.wait({ timeoutMs: 5000 });
   */
  send(inputs: readonly (string | Uint8Array)[], options?: SendOptions): Promise<void> {
    return this.#keepalive.during(
      this.#interaction.send(inputs, options, `${this.#label()}.send()`),
    );
  }

  /**
   * Wait for the process to exit. With `timeoutMs`, resolves `{ timedOut: true }`
   * when the deadline passes first, and leaves the process running.
   * Rejects with a `SpawnError` if the process never started.
   */
  async wait(options?: { timeoutMs?: number }): Promise<WaitResult> {
    const { timeoutMs } = resolveWaitOptions(options, `${this.#label()}.wait()`);
    const result = await this.#keepalive.during(this.#ended.wait(this.#pipeDrainMs(), timeoutMs));
    if (!result.timedOut) await this.#pty?.screen.flushed(); // screen() shows every byte read
    return result.timedOut ? result : this.#markRead(result);
  }

  /**
   * End the process and everything it started: SIGTERM to its process group,
   * SIGKILL after `graceMs` if anything is left, then reap. Safe to call more
   * than once and after it exited; resolves with how the process ended.
   * Windows: `taskkill /T /F` (the exit is then `exitCode: 1, signal:
   * null`), given 5 s; if it fails, the child itself is terminated and a
   * `SHIMKIT_TREE_NOT_ENDED` warning says its tree may live on, and if even
   * that fails, rejects with `ProcessNotEndedError` rather than hang.
   */
  close(options?: { graceMs?: number }): Promise<ProcessExit> {
    const { graceMs } = resolveCloseOptions(options, this.#options, `${this.#label()}.close()`);
    if (this.#closing === undefined) {
      this.#closing = this.#close(graceMs);
      untrackLeak(this.#leak, this.#closing);
    }
    return this.#closing;
  }

  /**
   * Type into the terminal (a process spawned with `pty`): text or raw
   * bytes, sent as they are (`'\r'` is Enter; `'\x03'` is Ctrl+C). Throws
   * like `write()` once the process exited.
   *
   * @example
   * p.type('hello\r');
   */
  type(text: string | Uint8Array): void {
    const pty: PtySession = this.#requirePty('type()');
    pty.checkText(text);
    this.#stdin.assertWritable('type()');
    this.#stdin.writeQuietly(text);
  }

  /**
   * Press keys by name, in order (a process spawned with `pty`): `Enter`,
   * `Tab`, `Shift+Tab`, `Backspace`, `Escape`, `Space`, `Up`, `Down`,
   * `Left`, `Right`, `Home`, `End`, `PageUp`, `PageDown`, `Insert`,
   * `Delete`, `F1`–`F12`, `Ctrl+<letter>` (and `Ctrl+[ \ ] ^ _ @`),
   * `Alt+<key>`, or one character. Case does not matter. The arrows, Home
   * and End are sent as the program asked for them (application cursor
   * mode). `Ctrl+C` reaches the program's foreground process group as
   * SIGINT, as in a terminal (unless the program turned that off).
   *
   * @example
   * p.press('Down', 'Down', 'Enter');
   * p.press('Ctrl+C');
   */
  press(...keys: string[]): void {
    const bytes = this.#requirePty('press()').keys(keys);
    this.#stdin.assertWritable('press()');
    this.#stdin.writeQuietly(bytes);
  }

  /**
   * Resize the terminal (a process spawned with `pty`): the program gets
   * SIGWINCH and reads the new size; the screen model takes it at once.
   */
  resize(cols: number, rows: number): void {
    const pty = this.#requirePty('resize()');
    if (!this.running) {
      throw this.#endedError('before resize() was called, so its terminal cannot change', 'all');
    }
    pty.resize(cols, rows);
  }

  /**
   * What the terminal shows now (a process spawned with `pty`), as rendered
   * by a headless xterm from every byte parsed so far: one string per row
   * (without the blank cells right of what was written), the cursor
   * (0-based), the size. After `wait()`
   * it includes all the output. Needs `@xterm/headless` (an optional
   * dependency of shimkit, installed with it by default).
   */
  screen(): ScreenSnapshot {
    return this.#requirePty('screen()').snapshot();
  }

  /**
   * Wait for the rendered screen to show `pattern` (text, or a RegExp over
   * the rows joined by `\n`): what a user would see, not the byte stream.
   * Resolves with the match; rejects with the last screen in the message
   * when `timeoutMs` passes (default 4000 ms) or the process exits first.
   *
   * @example
   * await p.waitForScreen(/\$ $/m); // a prompt at the end of a row
   */
  waitForScreen(
    pattern: string | RegExp,
    options?: { timeoutMs?: number },
  ): Promise<RegExpExecArray> {
    const pty = this.#requirePty('waitForScreen()');
    const where = `${this.#label()}.waitForScreen()`;
    const { timeoutMs, matcher } = resolveWaitForOutputOptions(pattern, options, where);
    return this.#keepalive
      .during(
        pty.screen.waitFor(
          matcher,
          timeoutMs,
          pattern,
          () => this.#afterOutput(),
          (what) => this.#endedError(what, 'all'),
        ),
      )
      .then((match) => this.#markRead(match));
  }

  /**
   * Send `signal` to the process's whole group, as a terminal does for Ctrl-C
   * (POSIX; on Windows to the child alone). Returns false when nothing was
   * left to signal. Use it to test signal handling; use `close()` to end it.
   *
   * @example
   * p.kill('SIGINT');
   * // A program without a SIGINT handler is ended by the signal:
   * expect(await p.wait({ timeoutMs: 5000 })).toMatchObject({ exitCode: null, signal: 'SIGINT' });
   * // (One that handles it and exits, as shells do with `exit 130`, reports that code and `signal: null`.)
   */
  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    if (typeof signal !== 'string' || !/^SIG[A-Z0-9]+$/.test(signal)) {
      throw new InvalidOptionError(
        `Expected the signal of ${this.#label()}.kill() to be a signal name like "SIGINT", got ${describeValue(signal)}.`,
      );
    }
    if (this.pid === 0) return false;
    // Killed, maybe not awaited: the sanitizer waits for its end before judging (LK-04).
    if (this.#leak && !this.#leak.settling) this.#leak.settling = this.ended();
    if (this.#options.platform === 'win32') return this.running && this.#child.kill(signal);
    return groupAlive(this.pid) && signalGroup(this.pid, signal);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #close(graceMs: number): Promise<ProcessExit> {
    const release = this.#keepalive.hold();
    try {
      const tree = {
        pid: this.pid,
        running: () => this.running,
        terminate: () => this.#child.kill('SIGKILL'),
        commandLine: this.commandLine,
      };
      await endTree(tree, this.#options.platform, graceMs);
      // On a PTY the helper leads a session: a job in a group of its own that
      // outlived the SIGHUP is in it still.
      if (this.#options.pty && this.pid > 0) killSession(this.pid, this.#leaderStart);
      await this.#afterOutput();
      await this.#pty?.screen.flushed();
    } finally {
      release();
    }
    this.#child.stdin?.destroy();
    this.#child.stdout?.destroy();
    this.#child.stderr?.destroy();
    this.#pty?.close();
    this.#forgetExitHook();
    this.#untrack();
    this.#interaction.stop();
    return this.#ended.result();
  }

  /**
   * How long after exit to wait for the pipes to close. On a PTY only the
   * helper writes to them, and it exits after the terminal's last byte (it
   * gave a background holder `drainMs` itself), so what is in them is the
   * program's output: wait for all of it (bounded, in case of a bug).
   */
  #pipeDrainMs(): number {
    return this.#options.pty
      ? Math.max(this.#options.drainMs, PTY_PIPE_DRAIN_MS)
      : this.#options.drainMs;
  }

  /** Exit (or spawn failure), then the drain. */
  #afterOutput(): Promise<void> {
    return this.#ended.afterOutput(this.#pipeDrainMs());
  }

  /** @internal Throws unless input can reach the process now; `what` names the caller. */
  assertWritable(what: string): void {
    this.#stdin.assertWritable(what);
  }

  /** @internal Keep Node alive (the child and its pipes ref'd) until the returned function is called. */
  hold(): () => void {
    return this.#keepalive.hold();
  }

  /** @internal For the interaction helpers (ignored once stdin is closed). */
  stdinWrite(data: string | Uint8Array): void {
    this.#stdin.writeQuietly(data);
  }

  /** @internal For the interaction helpers. */
  stdinEnd(): void {
    this.#stdin.endQuietly('send()');
  }

  /** @internal Resolves once the process exited (or failed to start) and its output drained. */
  ended(): Promise<void> {
    return this.#afterOutput();
  }

  /** @internal An error saying the process ended `what`, with its output tail. */
  endedError(what: string, stream: OutputSource = 'all'): Error {
    return this.#endedError(what, stream);
  }

  #endedError(what: string, stream: OutputSource): Error {
    const tail = this.#output.tailText(stream);
    return this.#ended.endedError(this.commandLine, this.pid, what, tail);
  }

  #requirePty(what: string): PtySession {
    if (this.#pty) return this.#pty;
    throw new NotATerminalError(
      `${this.#label()}.${what} needs a terminal, and this process runs on pipes. Spawn it with \`pty: { cols, rows }\` (or \`pty: true\` for 80×24).`,
    );
  }

  #label(): string {
    return `TestProcess(${truncate(this.commandLine, 60)})`;
  }
}

/**
 * Start the program under test. On POSIX it leads its own process group, so
 * `close()` ends it and everything it started.
 *
 * @example
 * const sb = createSandbox();
 * const p = spawnProcess('my-cli', ['init'], { sandbox: sb });
 * p.respond(/Continue\? \[y\/N\]/, 'y\n');
 * expect(await p.wait({ timeoutMs: 5000 })).toMatchObject({ exitCode: 0 });
 */
export function spawnProcess(
  command: string,
  args: readonly string[] = [],
  options?: SpawnProcessOptions,
): TestProcess {
  const resolved = resolveSpawn(command, args, options, 'spawnProcess');
  return TestProcess.create(command, args, resolved);
}

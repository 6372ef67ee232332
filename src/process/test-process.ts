import type { ChildProcess } from 'node:child_process';
import crossSpawn from 'cross-spawn';
import { describeValue, truncate } from '../internal/describe.js';
import { InvalidOptionError, WaitTimeoutError } from '../internal/errors.js';
import { onProcessExit } from '../internal/exit-cleanup.js';
import { formatCommand } from '../queue/format.js';
import { ProcessExitedError, SpawnError } from './errors.js';
import {
  Interaction,
  type Responder,
  type RespondOptions,
  type SendOptions,
} from './interaction.js';
import { groupAlive, killTreeSync, signalGroup, taskkill } from './kill.js';
import {
  type ResolvedSpawn,
  resolveCloseOptions,
  resolveSpawn,
  resolveWaitForOutputOptions,
  resolveWaitOptions,
  type SpawnProcessOptions,
} from './options.js';
import { ByteTail, TextWindow, utf8Decoder } from './tail.js';
import type {
  InteractiveProcess,
  OutputSource,
  OutputStream,
  ProcessExit,
  WaitResult,
} from './types.js';

export type { OutputSource, OutputStream, ProcessExit, WaitResult } from './types.js';

const POLL_MS = 10;
const REAP_LIMIT_MS = 5000;

/**
 * A program under test, started by `spawnProcess()`: its own process group,
 * bounded output tails, deadlines that do not kill, and a `close()` that ends
 * the whole tree. Cleaned up when the test process exits unless `keep: true`.
 *
 * @example
 * await using server = spawnProcess('node', ['server.js'], { sandbox: sb });
 * await server.waitForOutput(/listening on (\d+)/, { timeoutMs: 5000 });
 * // … talk to it …
 * const exit = await server.close(); // SIGTERM the group, SIGKILL after graceMs
 */
export class TestProcess implements InteractiveProcess {
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
  readonly #started = performance.now();
  readonly #tails: Record<'stdout' | 'stderr', ByteTail>;
  readonly #windows: Record<OutputSource, TextWindow>;
  readonly #interaction: Interaction;
  readonly #listeners = new Set<(source: OutputSource) => void>();
  #exit: ProcessExit | undefined;
  #error: SpawnError | undefined;
  #streamsClosed = false;
  readonly #settled: Promise<void>; // exit or spawn error
  readonly #drained: Promise<void>; // stdio closed (or spawn error)
  #forgetExitHook: () => void = () => {};
  #untrack: () => void = () => {};
  #closing: Promise<ProcessExit> | undefined;

  /** @internal Use `spawnProcess()`. */
  constructor(command: string, args: readonly string[], options: ResolvedSpawn) {
    this.command = command;
    this.args = args;
    this.commandLine = formatCommand(command, args);
    this.#options = options;
    const limit = options.tailBytes;
    this.#tails = { stdout: new ByteTail(limit), stderr: new ByteTail(limit) };
    const window = Math.max(limit, 4096);
    this.#windows = {
      stdout: new TextWindow(window),
      stderr: new TextWindow(window),
      all: new TextWindow(window),
    };
    this.stdout = streamView(this.#tails.stdout);
    this.stderr = streamView(this.#tails.stderr);

    const child = crossSpawn(command, [...args], {
      cwd: options.cwd,
      env: options.env,
      detached: options.platform !== 'win32',
      stdio: [options.stdin, 'pipe', 'pipe'],
      windowsHide: true,
    });
    this.#child = child;
    this.pid = child.pid ?? 0;

    this.#settled = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.#exit = {
          exitCode: code,
          signal,
          durationMs: Math.round(performance.now() - this.#started),
        };
        // Grandchildren may live on in the group; the exit hook stays until they are gone.
        if (options.platform === 'win32' || !groupAlive(this.pid)) this.#forgetExitHook();
        resolve();
      });
      child.once('error', (error) => {
        // Emitted instead of 'exit' when the process never started.
        if (this.#exit) return;
        this.#error = new SpawnError(this.commandLine, options.cwd, error);
        this.#forgetExitHook();
        resolve();
      });
    });
    this.#drained = new Promise((resolve) => {
      child.once('close', () => {
        this.#streamsClosed = true;
        resolve();
      });
      child.once('error', () => resolve());
    });

    this.#interaction = new Interaction(this, this.#windows);
    for (const name of ['stdout', 'stderr'] as const) {
      const decode = utf8Decoder();
      child[name]?.on('data', (chunk: Buffer) => {
        this.#tails[name].push(chunk);
        const text = decode(chunk);
        if (text === '') return;
        this.#windows[name].append(text);
        this.#windows.all.append(text);
        this.#interaction.output();
        for (const listener of [...this.#listeners]) listener(name);
      });
    }
    if (child.stdin) {
      child.stdin.on('error', () => {}); // EPIPE when the child exits before reading all input
      if (options.input !== undefined) child.stdin.end(options.input);
    }

    if (this.pid !== 0 && !options.keep) {
      const { platform } = options;
      const pid = this.pid;
      // taskkill is found through the test process's own SystemRoot, not the child's env.
      this.#forgetExitHook = onProcessExit(() => killTreeSync(pid, platform, process.env));
    }
    if (options.sandbox && this.pid !== 0) this.#untrack = options.sandbox.track(this);
  }

  /** Whether the process has not exited yet. */
  get running(): boolean {
    return this.#exit === undefined && this.#error === undefined;
  }

  /** How it ended, once it has. */
  get exit(): ProcessExit | undefined {
    return this.#exit;
  }

  /**
   * stdout and stderr as they interleaved (the last `max(tailBytes, 4096)`
   * characters): what to print when a test fails.
   */
  output(): string {
    return this.#windows.all.text;
  }

  /** Write to the process's stdin (when it was spawned with `stdin: 'pipe'`, the default). */
  write(data: string | Uint8Array): void {
    this.#stdin('write()').write(data);
  }

  /** Close the process's stdin: it reads end of file. */
  end(): void {
    this.#stdin('end()').end();
  }

  /**
   * Wait for the output so far to match `pattern` (text or a RegExp; `g`/`y`
   * flags are ignored). Resolves with the match; rejects with the output tail
   * in the message when `timeoutMs` passes or the process exits first.
   * The match is looked for in the last `max(tailBytes, 4096)` characters.
   */
  waitForOutput(
    pattern: string | RegExp,
    options?: { timeoutMs?: number; stream?: OutputSource },
  ): Promise<RegExpExecArray> {
    const where = `${this.#label()}.waitForOutput()`;
    const { timeoutMs, stream, matcher } = resolveWaitForOutputOptions(pattern, options, where);
    const window = this.#windows[stream];
    const found = matcher(window.text);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const finish = (error?: Error, match?: RegExpExecArray) => {
        clearTimeout(timer);
        this.#listeners.delete(onOutput);
        if (error) reject(error);
        else resolve(match as RegExpExecArray);
      };
      const onOutput = (source: OutputSource) => {
        if (stream !== 'all' && source !== stream) return;
        const match = matcher(window.text);
        if (match) finish(undefined, match);
      };
      const timer = setTimeout(
        () =>
          finish(
            new WaitTimeoutError(
              `${where}: no output matched ${String(pattern)} within ${timeoutMs} ms. ${this.#tailText(stream)}`,
            ),
          ),
        timeoutMs,
      );
      this.#listeners.add(onOutput);
      this.#afterOutput().then(() => {
        if (!this.#listeners.has(onOutput)) return;
        const match = matcher(window.text);
        if (match) return finish(undefined, match);
        finish(this.#endedError(`before its output matched ${String(pattern)}`, stream));
      });
    });
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
    return this.#interaction.send(inputs, options, `${this.#label()}.send()`);
  }

  /**
   * Wait for the process to exit. With `timeoutMs`, resolves `{ timedOut: true }`
   * when the deadline passes first, and leaves the process running.
   * Rejects with a `SpawnError` if the process never started.
   */
  async wait(options?: { timeoutMs?: number }): Promise<WaitResult> {
    const { timeoutMs } = resolveWaitOptions(options, `${this.#label()}.wait()`);
    if (timeoutMs === undefined) {
      await this.#afterOutput();
    } else {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), timeoutMs);
      });
      const outcome = await Promise.race([this.#afterOutput(), deadline]);
      clearTimeout(timer);
      if (outcome === 'late') return { timedOut: true };
    }
    if (this.#error) throw this.#error;
    return { ...(this.#exit as ProcessExit), timedOut: false };
  }

  /**
   * End the process and everything it started: SIGTERM to its process group,
   * SIGKILL after `graceMs` if anything is left, then reap (Windows:
   * `taskkill /T /F`). Safe to call more than once and after it exited;
   * always resolves with how the process ended.
   */
  close(options?: { graceMs?: number }): Promise<ProcessExit> {
    const { graceMs } = resolveCloseOptions(options, this.#options, `${this.#label()}.close()`);
    this.#closing ??= this.#close(graceMs);
    return this.#closing;
  }

  /**
   * Send `signal` to the process's whole group, as a terminal does for Ctrl-C
   * (POSIX; on Windows to the child alone). Returns false when nothing was
   * left to signal. Use it to test signal handling; use `close()` to end it.
   *
   * @example
   * p.kill('SIGINT');
   * expect(await p.wait({ timeoutMs: 5000 })).toMatchObject({ exitCode: 130 });
   */
  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    if (typeof signal !== 'string' || !/^SIG[A-Z0-9]+$/.test(signal)) {
      throw new InvalidOptionError(
        `Expected the signal of ${this.#label()}.kill() to be a signal name like "SIGINT", got ${describeValue(signal)}.`,
      );
    }
    if (this.pid === 0) return false;
    if (this.#options.platform === 'win32') return this.running && this.#child.kill(signal);
    return groupAlive(this.pid) && signalGroup(this.pid, signal);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #close(graceMs: number): Promise<ProcessExit> {
    const { platform } = this.#options;
    if (this.pid !== 0) {
      if (platform === 'win32') {
        if (this.running) await taskkill(this.pid, process.env); // the test process's SystemRoot
      } else if (signalGroup(this.pid, 'SIGTERM')) {
        const gone = () => !this.running && !groupAlive(this.pid);
        if (!(await until(gone, graceMs))) {
          signalGroup(this.pid, 'SIGKILL');
          await until(gone, REAP_LIMIT_MS);
        }
      }
    }
    await this.#settled;
    await this.#drain();
    this.#child.stdin?.destroy();
    this.#child.stdout?.destroy();
    this.#child.stderr?.destroy();
    this.#forgetExitHook();
    this.#untrack();
    this.#interaction.stop();
    return (
      this.#exit ?? { exitCode: null, signal: null, durationMs: performance.now() - this.#started }
    );
  }

  /** After exit, give the output streams up to `drainMs` to deliver what is still in the pipes. */
  async #drain(): Promise<void> {
    if (this.#streamsClosed || this.#error) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.#drained,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.#options.drainMs);
      }),
    ]);
    clearTimeout(timer);
  }

  /** Exit (or spawn failure), then the drain. */
  async #afterOutput(): Promise<void> {
    await this.#settled;
    await this.#drain();
  }

  /** @internal Throws unless stdin is a pipe; `what` names the caller. */
  assertWritable(what: string): void {
    this.#stdin(what);
  }

  /** @internal For the interaction helpers (ignored once stdin is closed). */
  stdinWrite(data: string | Uint8Array): void {
    const stdin = this.#child.stdin;
    if (stdin && !stdin.writableEnded) stdin.write(data);
  }

  /** @internal For the interaction helpers. */
  stdinEnd(): void {
    this.#child.stdin?.end();
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
    if (this.#error) return this.#error;
    const exit = this.#exit as ProcessExit;
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.exitCode}`;
    return new ProcessExitedError(
      `${this.commandLine} (pid ${this.pid}) ${how} ${what}. ${this.#tailText(stream)}`,
      exit.exitCode,
      exit.signal,
    );
  }

  #tailText(stream: OutputSource): string {
    const text = this.#windows[stream].text;
    const label = stream === 'all' ? 'output' : stream;
    if (text === '') return `It wrote no ${label}.`;
    return `Last ${label}:\n${truncate(text.slice(-2000), 2000)}`;
  }

  #label(): string {
    return `TestProcess(${truncate(this.commandLine, 60)})`;
  }

  #stdin(what: string) {
    const stdin = this.#child.stdin;
    if (!stdin) {
      throw new SpawnError(
        this.commandLine,
        this.#options.cwd,
        new Error(
          `${what} needs stdin: 'pipe' (this process was spawned with stdin: '${String(this.#options.stdin)}')`,
        ),
      );
    }
    return stdin;
  }
}

function streamView(tail: ByteTail): OutputStream {
  return {
    tail: () => tail.text(),
    bytes: () => tail.bytes(),
    get totalBytes() {
      return tail.totalBytes;
    },
    get droppedBytes() {
      return tail.droppedBytes;
    },
  };
}

/** Poll `condition` every few ms until it holds (true) or `limitMs` passes (false). */
async function until(condition: () => boolean, limitMs: number): Promise<boolean> {
  const deadline = performance.now() + limitMs;
  while (!condition()) {
    if (performance.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return true;
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
  return new TestProcess(command, args, resolved);
}

import type { ChildProcess } from 'node:child_process';
import { truncate } from '../internal/describe.js';
import { WaitTimeoutError } from '../internal/errors.js';
import type { Matcher } from './options.js';
import { ByteTail, TextWindow, utf8Decoder } from './tail.js';
import type { OutputSource, OutputStream } from './types.js';
import { waitForMatch } from './wait-match.js';

/**
 * The output of one TestProcess: a bounded byte tail per stream, and decoded
 * text windows (stdout, stderr, and both in arrival order) for matchers.
 */
export class ProcessOutput {
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  /** Text windows of `max(tailBytes, 4096)` characters. */
  readonly windows: Record<OutputSource, TextWindow>;
  readonly #tails: Record<'stdout' | 'stderr', ByteTail>;
  readonly #listeners = new Set<(source: OutputSource) => void>();

  constructor(tailBytes: number) {
    this.#tails = { stdout: new ByteTail(tailBytes), stderr: new ByteTail(tailBytes) };
    const window = Math.max(tailBytes, 4096);
    this.windows = {
      stdout: new TextWindow(window),
      stderr: new TextWindow(window),
      all: new TextWindow(window),
    };
    this.stdout = streamView(this.#tails.stdout);
    this.stderr = streamView(this.#tails.stderr);
  }

  /** Collect the child's stdout and stderr; `onText` runs on each decoded piece, before waiters. */
  attach(child: ChildProcess, onText: () => void): void {
    for (const name of ['stdout', 'stderr'] as const) {
      const decode = utf8Decoder();
      child[name]?.on('data', (chunk: Buffer) => {
        this.#tails[name].push(chunk);
        const text = decode(chunk);
        if (text === '') return;
        this.windows[name].append(text);
        this.windows.all.append(text);
        onText();
        for (const listener of [...this.#listeners]) listener(name);
      });
    }
  }

  /**
   * Resolve with the first match of `matcher` in `stream`'s window; reject
   * with a `WaitTimeoutError` after `timeoutMs`, or with `endedError(…)`
   * when `ended()` resolves first without a match.
   */
  waitFor(
    matcher: Matcher,
    stream: OutputSource,
    timeoutMs: number,
    where: string,
    pattern: string | RegExp,
    ended: () => Promise<void>,
    endedError: (what: string, stream: OutputSource) => Error,
  ): Promise<RegExpExecArray> {
    const window = this.windows[stream];
    return waitForMatch({
      look: () => matcher(window.text),
      subscribe: (check) => {
        const onOutput = (source: OutputSource) => {
          if (stream === 'all' || source === stream) check();
        };
        this.#listeners.add(onOutput);
        return () => this.#listeners.delete(onOutput);
      },
      timeoutMs,
      timeoutError: () =>
        new WaitTimeoutError(
          `${where}: no output matched ${String(pattern)} within ${timeoutMs} ms. ${this.tailText(stream)}`,
        ),
      ended,
      endedError: () => endedError(`before its output matched ${String(pattern)}`, stream),
    });
  }

  /** The end of `stream`'s text for an error message: "Last stdout:\n…" or "It wrote no stdout." */
  tailText(stream: OutputSource): string {
    const text = this.windows[stream].text;
    const label = stream === 'all' ? 'output' : stream;
    if (text === '') return `It wrote no ${label}.`;
    return `Last ${label}:\n${truncate(text.slice(-2000), 2000)}`;
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

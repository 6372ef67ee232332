import { createRequire } from 'node:module';
import { WaitTimeoutError } from '../../internal/errors.js';
import type { Matcher } from '../options.js';
import { waitForMatch } from '../wait-match.js';
import { PtyUnavailableError } from './errors.js';
import { type WidthProvider, widthProvider } from './unicode.js';

/** What a terminal shows: its rows as text and where the cursor is, 0-based. */
export interface ScreenSnapshot {
  /**
   * One string per row of the terminal, top to bottom. The cells right of
   * the last one written (or after what was erased) are left out; spaces the
   * program wrote stay, so a prompt `name? ` reads as it was printed.
   */
  lines: string[];
  /** The cursor: row from the top and column from the left, both from 0. */
  cursor: { row: number; col: number };
  /** The size of the terminal now. */
  cols: number;
  rows: number;
}

/** The part of `@xterm/headless`'s Terminal used here (so its types never reach shimkit's own). */
interface HeadlessTerminal {
  readonly cols: number;
  readonly rows: number;
  readonly modes: { readonly applicationCursorKeysMode: boolean };
  readonly unicode: { register(provider: WidthProvider): void; activeVersion: string };
  readonly buffer: {
    readonly active: {
      readonly baseY: number;
      readonly cursorX: number;
      readonly cursorY: number;
      getLine(y: number): { translateToString(trimRight?: boolean): string } | undefined;
    };
  };
  write(data: string | Uint8Array, callback?: () => void): void;
  input(data: string, wasUserInput?: boolean): void;
  resize(cols: number, rows: number): void;
  onData(listener: (data: string) => void): unknown;
  onBinary(listener: (data: string) => void): unknown;
  dispose(): void;
}

type TerminalClass = new (options: Record<string, unknown>) => HeadlessTerminal;

const nodeRequire = createRequire(import.meta.url);
let loaded: TerminalClass | null | undefined;

/** `@xterm/headless`'s Terminal, or null when it is not installed (an optional dependency). */
function terminalClass(): TerminalClass | null {
  if (loaded === undefined) {
    try {
      loaded = (nodeRequire('@xterm/headless') as { Terminal: TerminalClass }).Terminal;
    } catch {
      loaded = null;
    }
  }
  return loaded;
}

/**
 * The screen of a PTY process (requirement SP-13): the bytes the program
 * writes, rendered by a headless xterm, which also answers the terminal's own
 * queries (cursor position, device attributes) through `reply`. Without
 * `@xterm/headless` installed, the byte stream still works and reading the
 * screen throws `PtyUnavailableError`.
 */
export class TerminalScreen {
  readonly #terminal: HeadlessTerminal | null;
  readonly #where: string;
  readonly #listeners = new Set<() => void>();
  #pending = 0;
  #idle: (() => void)[] = [];

  constructor(cols: number, rows: number, reply: (data: string) => void, where: string) {
    this.#where = where;
    const Terminal = terminalClass();
    this.#terminal = Terminal
      ? new Terminal({
          cols,
          rows,
          allowProposedApi: true,
          scrollback: 1000,
          scrollOnUserInput: false,
        })
      : null;
    if (this.#terminal) {
      // Cell widths as a real terminal's (tmux, wcwidth): emoji two wide.
      this.#terminal.unicode.register(widthProvider);
      this.#terminal.unicode.activeVersion = widthProvider.version;
    }
    const answer = (data: string) => {
      if (data !== '') reply(data);
    };
    this.#terminal?.onData(answer);
    this.#terminal?.onBinary(answer);
  }

  /** Whether a screen model is there (`@xterm/headless` is installed). */
  get available(): boolean {
    return this.#terminal !== null;
  }

  /** DECCKM: whether the program asked for application cursor keys (`ESC O A` for Up). */
  get applicationCursor(): boolean {
    return this.#terminal?.modes.applicationCursorKeysMode ?? false;
  }

  /** Feed output; waiters are checked once the emulator has parsed it. */
  write(chunk: Uint8Array): void {
    const terminal = this.#terminal;
    if (!terminal) return;
    this.#pending += 1;
    // xterm parses a write on a timer (~1 ms later in Node) unless it follows
    // user input; an empty "input" marks it so, and it is parsed at once when
    // nothing is queued. (Only latency depends on this: either way the
    // callback below runs once the chunk is parsed.)
    if (this.#pending === 1) terminal.input('', true);
    terminal.write(chunk, () => {
      this.#pending -= 1;
      for (const listener of [...this.#listeners]) listener();
      if (this.#pending === 0) for (const done of this.#idle.splice(0)) done();
    });
  }

  resize(cols: number, rows: number): void {
    this.#terminal?.resize(cols, rows);
  }

  /** Resolves once everything written so far is parsed. */
  flushed(): Promise<void> {
    if (this.#pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  snapshot(what: string): ScreenSnapshot {
    const terminal = this.#require(what);
    const buffer = terminal.buffer.active;
    const lines: string[] = [];
    for (let row = 0; row < terminal.rows; row++) {
      lines.push(buffer.getLine(buffer.baseY + row)?.translateToString(true) ?? '');
    }
    return {
      lines,
      cursor: { row: buffer.cursorY, col: buffer.cursorX },
      cols: terminal.cols,
      rows: terminal.rows,
    };
  }

  /**
   * Resolve with the first match of `matcher` in the screen's text (rows
   * joined by `\n`); reject with the last screen after `timeoutMs`, or with
   * `endedError(…)` when `ended()` resolves without a match.
   */
  waitFor(
    matcher: Matcher,
    timeoutMs: number,
    pattern: string | RegExp,
    ended: () => Promise<void>,
    endedError: (what: string) => Error,
  ): Promise<RegExpExecArray> {
    const where = `${this.#where}.waitForScreen()`;
    this.#require('waitForScreen()');
    return waitForMatch({
      look: () => matcher(this.snapshot('waitForScreen()').lines.join('\n')),
      subscribe: (check) => {
        this.#listeners.add(check);
        return () => this.#listeners.delete(check);
      },
      timeoutMs,
      timeoutError: () =>
        new WaitTimeoutError(
          `${where}: the screen did not show ${String(pattern)} within ${timeoutMs} ms. ${this.describe()}`,
        ),
      ended: () => ended().then(() => this.flushed()),
      endedError: () =>
        endedError(`before its screen showed ${String(pattern)}. ${this.describe().trimEnd()}`),
    });
  }

  /** The screen for a message: its size, the cursor, and its rows in a frame. */
  describe(): string {
    if (!this.#terminal) return '';
    const { lines, cursor, cols, rows } = this.snapshot('describe()');
    let last = lines.length;
    while (last > 0 && lines[last - 1] === '') last -= 1;
    const shown = lines.slice(0, last).map((line) => `│${line}`);
    const more = last < rows ? `\n(${rows - last} empty rows below)` : '';
    return `Last screen (${cols}×${rows}, cursor at row ${cursor.row}, col ${cursor.col}):\n${shown.join('\n') || '(empty)'}${more}\n`;
  }

  dispose(): void {
    this.#listeners.clear();
    for (const done of this.#idle.splice(0)) done();
    this.#terminal?.dispose();
  }

  #require(what: string): HeadlessTerminal {
    if (this.#terminal) return this.#terminal;
    throw new PtyUnavailableError(
      `${this.#where}.${what} needs a screen model, and @xterm/headless (an optional dependency of shimkit) is not installed. Install it (\`npm install --save-dev @xterm/headless\`); waitForOutput() reads the byte stream without it.`,
    );
  }
}

import type { ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';
import { describeValue } from '../../internal/describe.js';
import { InvalidOptionError } from '../../internal/errors.js';
import { optionError } from '../../internal/options.js';
import { keyBytes } from './keys.js';
import { MAX_PTY_SIZE, type ResolvedPty } from './options.js';
import { resizeCommand } from './python.js';
import { type ScreenSnapshot, TerminalScreen } from './screen.js';

/**
 * The terminal side of a PTY TestProcess (requirement SP-13): the screen
 * model fed with every output chunk, typing and keys, and resizing through
 * the helper's control channel.
 */
export class PtySession {
  readonly screen: TerminalScreen;
  readonly #control: Writable | undefined;
  readonly #where: string;

  /** `input` writes to the terminal (what is typed, and the emulator's answers to queries). */
  constructor(
    child: ChildProcess,
    pty: ResolvedPty,
    where: string,
    input: (data: string | Uint8Array) => void,
  ) {
    this.#where = where;
    this.screen = new TerminalScreen(pty.cols, pty.rows, input, where);
    child.stdout?.on('data', (chunk: Buffer) => this.screen.write(chunk));
    this.#control = child.stdio?.[3] as Writable | undefined;
  }

  /** The bytes of `keys`, checked all before any is sent. */
  keys(keys: readonly unknown[]): string {
    if (keys.length === 0) {
      throw new InvalidOptionError(
        `${this.#where}.press() was given no key; pass one or more names, e.g. press('Down', 'Enter').`,
      );
    }
    const applicationCursor = this.screen.applicationCursor;
    return keys.map((key) => keyBytes(key, applicationCursor, `${this.#where}.press()`)).join('');
  }

  /** Checks `text` for `type()`. */
  checkText(text: unknown): asserts text is string | Uint8Array {
    if (typeof text !== 'string' && !(text instanceof Uint8Array)) {
      throw new InvalidOptionError(
        `Expected the text of ${this.#where}.type() to be a string or bytes, got ${describeValue(text)}.`,
      );
    }
  }

  resize(cols: unknown, rows: unknown): void {
    const where = `${this.#where}.resize()`;
    for (const [name, n] of [
      ['cols', cols],
      ['rows', rows],
    ] as const) {
      if (!Number.isInteger(n) || (n as number) < 1 || (n as number) > MAX_PTY_SIZE) {
        throw optionError(where, name, `an integer from 1 to ${MAX_PTY_SIZE}`, n);
      }
    }
    this.screen.resize(cols as number, rows as number);
    this.#control?.write(resizeCommand(cols as number, rows as number));
  }

  snapshot(): ScreenSnapshot {
    return this.screen.snapshot('screen()');
  }

  close(): void {
    this.#control?.destroy();
  }
}

import { describeValue } from '../internal/describe.js';
import { InvalidOptionError, WaitTimeoutError } from '../internal/errors.js';
import { DEFAULT_WAIT_MS } from '../internal/limits.js';
import { checkMs, checkOptionKeys, optionError } from '../internal/options.js';
import { checkSource, type Matcher, toMatcher } from './options.js';
import type { TextWindow } from './tail.js';
import type { InteractiveProcess, OutputSource } from './types.js';

/** Options of `respond()`. */
export interface RespondOptions {
  /**
   * Which output the prompt appears on.
   * @default 'all'
   */
  stream?: OutputSource;
  /**
   * Answer at most this many times, then stop watching.
   * @default Infinity
   */
  times?: number;
}

/** A standing answer from `respond()`. */
export interface Responder {
  /** How many times the prompt was answered. */
  readonly count: number;
  /** Stop answering. */
  stop(): void;
}

/** Options of `send()`. */
export interface SendOptions {
  /**
   * How long the output must be quiet before the next input is written.
   * @default 200
   */
  idleMs?: number;
  /**
   * Deadline for writing every input (below the 5 s test timeout of vitest
   * and jest; raise it for long sessions).
   * @default 4000
   */
  timeoutMs?: number;
  /**
   * Close stdin after the last input.
   * @default true
   */
  end?: boolean;
}

interface Watch {
  matcher: Matcher;
  answer: string | ((match: RegExpExecArray) => string);
  stream: OutputSource;
  cursor: number; // absolute offset: text before it was already answered
  count: number;
  times: number;
}

/** Expect-style scripting of a TestProcess: standing answers to prompts, and paced input. */
export class Interaction {
  readonly #process: InteractiveProcess;
  readonly #windows: Record<OutputSource, TextWindow>;
  readonly #watches = new Set<Watch>();
  #lastActivity = performance.now();

  constructor(process: InteractiveProcess, windows: Record<OutputSource, TextWindow>) {
    this.#process = process;
    this.#windows = windows;
  }

  /** Called on every piece of output. */
  output(): void {
    this.#lastActivity = performance.now();
    for (const watch of [...this.#watches]) this.#check(watch);
  }

  stop(): void {
    this.#watches.clear();
  }

  respond(
    pattern: string | RegExp,
    answer: string | ((match: RegExpExecArray) => string),
    options: RespondOptions | undefined,
    where: string,
  ): Responder {
    const matcher = toMatcher(pattern, where);
    if (typeof answer !== 'string' && typeof answer !== 'function') {
      throw new InvalidOptionError(
        `Expected the answer of ${where} to be a string or a function returning one, got ${describeValue(answer)}.`,
      );
    }
    const o = checkOptionKeys(options, ['stream', 'times'], where);
    const times = o.times ?? Number.POSITIVE_INFINITY;
    if (times !== Number.POSITIVE_INFINITY && (!Number.isInteger(times) || times < 1)) {
      throw optionError(where, 'times', 'a positive integer', times);
    }
    this.#process.assertWritable('respond()');
    const watch: Watch = {
      matcher,
      answer,
      stream: checkSource(o.stream, where),
      cursor: 0,
      count: 0,
      times,
    };
    this.#watches.add(watch);
    this.#check(watch); // the prompt may already be out
    return {
      get count() {
        return watch.count;
      },
      stop: () => {
        this.#watches.delete(watch);
      },
    };
  }

  /** Answer every match after the cursor, oldest first. */
  #check(watch: Watch): void {
    const window = this.#windows[watch.stream];
    while (this.#watches.has(watch)) {
      const from = Math.max(watch.cursor - window.base, 0);
      const match = watch.matcher(window.text.slice(from));
      if (!match) return;
      watch.cursor = window.base + from + match.index + match[0].length;
      watch.count += 1;
      if (watch.count >= watch.times) this.#watches.delete(watch);
      const text = typeof watch.answer === 'string' ? watch.answer : String(watch.answer(match));
      this.#process.stdinWrite(text);
      this.#lastActivity = performance.now();
    }
  }

  async send(
    inputs: readonly (string | Uint8Array)[],
    options: SendOptions | undefined,
    where: string,
  ): Promise<void> {
    if (
      !Array.isArray(inputs) ||
      !inputs.every((i) => typeof i === 'string' || i instanceof Uint8Array)
    ) {
      throw new InvalidOptionError(
        `Expected the inputs of ${where} to be an array of strings or bytes, got ${describeValue(inputs)}.`,
      );
    }
    const o = checkOptionKeys(options, ['idleMs', 'timeoutMs', 'end'], where);
    const idleMs = checkMs(where, 'idleMs', o.idleMs, 200);
    const timeoutMs = checkMs(where, 'timeoutMs', o.timeoutMs, DEFAULT_WAIT_MS, 1);
    if (o.end !== undefined && typeof o.end !== 'boolean')
      throw optionError(where, 'end', 'true or false', o.end);
    this.#process.assertWritable('send()');
    const deadline = performance.now() + timeoutMs;
    for (const [i, input] of inputs.entries()) {
      await this.#idle(
        idleMs,
        deadline,
        () => `input ${i + 1} of ${inputs.length}`,
        where,
        timeoutMs,
      );
      this.#process.stdinWrite(input);
      this.#lastActivity = performance.now();
    }
    if (o.end ?? true) this.#process.stdinEnd();
  }

  /** Resolve once no output came for `idleMs`; reject if the process ends or the deadline passes. */
  async #idle(
    idleMs: number,
    deadline: number,
    which: () => string,
    where: string,
    timeoutMs: number,
  ): Promise<void> {
    for (;;) {
      if (!this.#process.running) {
        throw this.#process.endedError(`before ${which()} was sent by ${where}`);
      }
      const now = performance.now();
      const quietFor = now - this.#lastActivity;
      if (quietFor >= idleMs) return;
      if (now >= deadline) {
        throw new WaitTimeoutError(
          `${where}: the output never stayed quiet for ${idleMs} ms before ${which()} within ${timeoutMs} ms. Last output:\n${this.#windows.all.text.slice(-2000)}`,
        );
      }
      const wait = Math.min(idleMs - quietFor, deadline - now);
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.ceil(wait))));
    }
  }
}

import { type FSWatcher, mkdirSync, readdirSync, readFileSync, watch } from 'node:fs';
import { dirname } from 'node:path';
import { describeValue, truncate } from '../internal/describe.js';
import { DisposedError, InvalidOptionError, WaitTimeoutError } from '../internal/errors.js';
import { counted, secondsText } from '../internal/leak-lines.js';
import { DEFAULT_WAIT_MS } from '../internal/limits.js';
import { tryUnlink, writeFileAtomic } from '../queue/atomic.js';
import { formatCommand } from '../queue/format.js';
import {
  type LiveAnswer,
  type LiveCall,
  type LiveState,
  liveAnswerPath,
  liveDir,
  livePath,
  pidNamespace,
} from '../queue/live.js';
import { fits } from '../queue/route.js';
import type { MockMatch, MockResponse, WireMatch } from '../queue/types.js';
import { markExactEnv } from '../queue/writer.js';
import { toWireResponse } from './options.js';

/**
 * The test process's side of the live channel (requirement MB-16; the
 * protocol is in src/queue/live.ts): `handle()` answers calls no queued
 * response is left for, from a function; `hold()` stops the next call that
 * fits until the test releases it — a barrier for race tests.
 */

/** What a handler or a hold sees of a call. */
export interface LiveCallInfo {
  /** The call's number, as in `MockCall.index`. */
  index: number;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
}

/** Answers a call: a response, or undefined for none (the call is then unmatched). */
export type LiveHandler = (
  call: LiveCallInfo,
) => MockResponse | undefined | Promise<MockResponse | undefined>;

/** A hold on the next call that fits (see `MockBinary.hold()`). */
export class HeldCall {
  readonly #name: string;
  readonly match: WireMatch | undefined;
  #call: LiveCallInfo | undefined;
  #received: Array<{ resolve: (call: LiveCallInfo) => void; reject: (error: Error) => void }> = [];
  /** Why the hold is over (its mock was reset or disposed), once it is. */
  #ended: string | undefined;
  #release: ((response: MockResponse | undefined) => void) | undefined;
  readonly #released: Promise<MockResponse | undefined>;
  /** `release()` was called. */
  #let = false;
  /** When the call arrived (performance.now()), for the leak report. */
  #heldAt = 0;

  /** @internal */
  constructor(name: string, match: WireMatch | undefined) {
    this.#name = name;
    this.match = match;
    this.#released = new Promise((resolve) => {
      this.#release = resolve;
    });
  }

  /** Whether no call has reached this hold yet. */
  get waiting(): boolean {
    return this.#call === undefined;
  }

  /**
   * Resolves with the call once it arrives and is held (it waits, running,
   * until `release()`). Rejects with `WaitTimeoutError` after `timeoutMs`.
   */
  waitReceived(options: { timeoutMs?: number } = {}): Promise<LiveCallInfo> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_MS;
    if (this.#call) return Promise.resolve(this.#call);
    if (this.#ended) return Promise.reject(this.#endedError());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new WaitTimeoutError(
              `No call of mock "${this.#name}" reached the hold within ${timeoutMs} ms. Check that the program under test makes that call, and that it fits the hold's match.`,
            ),
          ),
        timeoutMs,
      );
      this.#received.push({
        resolve: (call) => {
          clearTimeout(timer);
          resolve(call);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
    });
  }

  /**
   * Let the held call go on: with `response`, or with what it would have got
   * (its queued response, else the handler's). Releasing before the call
   * arrives lets that call through at once. Throws `DisposedError` once the
   * mock was reset or disposed: the call it held ended with its generation.
   */
  release(response?: MockResponse): void {
    if (this.#ended) throw this.#endedError();
    if (response !== undefined)
      toWireResponse(response, `the response passed to release() on mock "${this.#name}"`);
    this.#let = true;
    this.#release?.(response);
  }

  /** @internal Whether this hold takes `call` (the first that fits, once). */
  takes(call: LiveCall): boolean {
    return this.#call === undefined && this.#ended === undefined && fits(this.match, call);
  }

  /** @internal Hold `call` until released: taken at once, so no other call can be. */
  hold(call: LiveCallInfo): Promise<MockResponse | undefined> {
    this.#call = call;
    this.#heldAt = performance.now();
    for (const waiter of this.#received.splice(0)) waiter.resolve(call);
    return this.#released;
  }

  /** @internal The mock was reset or disposed (`how`): the hold is over. */
  end(how: 'reset()' | 'dispose()'): void {
    this.#ended ??= how;
    for (const waiter of this.#received.splice(0)) waiter.reject(this.#endedError());
  }

  /**
   * @internal For the leak report (LK-02), while neither released nor
   * ended: the call it holds (`call #2 git push a, held 1.0 s`), or that
   * none came yet. Undefined once it holds nothing.
   */
  leakLine(): string | undefined {
    if (this.#let || this.#ended) return undefined;
    const call = this.#call;
    if (call === undefined) {
      const match =
        this.match === undefined ? '' : ` fitting ${truncate(JSON.stringify(this.match), 80)}`;
      return `waiting for a call${match}`;
    }
    const held = secondsText(performance.now() - this.#heldAt);
    return `call #${call.index} ${formatCommand(this.#name, call.argv)} (held ${held})`;
  }

  #endedError(): DisposedError {
    return new DisposedError(`The hold() on mock "${this.#name}", ended by ${this.#ended},`);
  }
}

/** One mock's live channel: marker, watcher, answers. */
export class LiveChannel {
  readonly #name: string;
  readonly #genDir: () => string;
  #handler: LiveHandler | undefined;
  readonly #holds: HeldCall[] = [];
  readonly #seen = new Set<string>();
  #watched: string | undefined;
  #watcher: FSWatcher | undefined;
  #poll: NodeJS.Timeout | undefined;

  constructor(name: string, genDir: () => string) {
    this.#name = name;
    this.#genDir = genDir;
  }

  setHandler(handler: LiveHandler | undefined): void {
    if (handler !== undefined && typeof handler !== 'function') {
      throw new InvalidOptionError(
        `Expected handle() on mock "${this.#name}" to get a function (call) => response, or undefined to stop, got ${describeValue(handler)}.`,
      );
    }
    this.#handler = handler;
    this.refresh();
  }

  addHold(match: MockMatch | undefined): HeldCall {
    const wire =
      match === undefined
        ? undefined
        : toWireResponse({ match }, `the match passed to hold() on mock "${this.#name}"`).match;
    const hold = new HeldCall(this.#name, wire);
    this.#holds.push(hold);
    this.refresh();
    return hold;
  }

  /** Write the marker of the live generation (again after a reset), and watch it. */
  refresh(): void {
    const genDir = this.#genDir();
    const active = this.#handler !== undefined || this.#holds.length > 0;
    const say = this.#handler !== undefined || this.#holds.some((h) => h.waiting);
    if (!say) {
      // No marker: calls go on without asking, and the sh shim serves them again.
      tryUnlink(livePath(genDir));
      if (!active) this.stop();
      return;
    }
    // A handler or a hold may answer `passthrough`, and the real command gets
    // the caller's env as it was: from now on the shim hands it over exactly
    // (a fork, ~1 ms, on calls the runner serves; see exact-env in layout.ts).
    markExactEnv(dirname(genDir));
    mkdirSync(liveDir(genDir), { recursive: true, mode: 0o700 });
    writeFileAtomic(
      livePath(genDir),
      JSON.stringify({
        handler: this.#handler !== undefined,
        holds: this.#holds.some((h) => h.waiting),
        pid: process.pid,
        pidns: pidNamespace(),
      } satisfies LiveState),
    );
    if (this.#watched !== genDir) {
      this.stop();
      this.#watched = genDir;
      try {
        this.#watcher = watch(liveDir(genDir), () => this.#scan());
        this.#watcher.unref();
        this.#watcher.on('error', () => {});
      } catch {
        // no watcher here: the poll below still answers
      }
      this.#poll = setInterval(() => this.#scan(), 25);
      this.#poll.unref();
    }
    this.#scan();
  }

  /**
   * The mock was reset or disposed: every hold ends with the generation its
   * call ran in (that call ends on its own, its state gone); a handler stays.
   */
  endHolds(how: 'reset()' | 'dispose()'): void {
    for (const hold of this.#holds.splice(0)) hold.end(how);
  }

  /** @internal For the leak report (LK-02): the holds not released, one line for all. */
  leakLine(): string | undefined {
    const held = this.#holds.map((h) => h.leakLine()).filter((l) => l !== undefined);
    if (held.length === 0) return undefined;
    return `${counted(held.length, 'hold')} of ${this.#name} not released: ${held.join('; ')}`;
  }

  stop(): void {
    this.#watcher?.close();
    this.#watcher = undefined;
    if (this.#poll) clearInterval(this.#poll);
    this.#poll = undefined;
    this.#watched = undefined;
  }

  #scan(): void {
    const genDir = this.#watched;
    if (!genDir) return;
    let names: string[];
    try {
      names = readdirSync(liveDir(genDir));
    } catch {
      return; // reset or disposed meanwhile
    }
    for (const name of names) {
      if (!name.endsWith('.call') || this.#seen.has(`${genDir}/${name}`)) continue;
      this.#seen.add(`${genDir}/${name}`);
      let call: LiveCall;
      try {
        call = JSON.parse(readFileSync(`${liveDir(genDir)}/${name}`, 'utf8')) as LiveCall;
      } catch {
        this.#seen.delete(`${genDir}/${name}`); // read again next time
        continue;
      }
      void this.#answer(genDir, call);
    }
  }

  async #answer(genDir: string, call: LiveCall): Promise<void> {
    const info: LiveCallInfo = { index: call.seq, argv: call.argv, cwd: call.cwd, env: call.env };
    let answer: LiveAnswer;
    const hold = this.#holds.find((h) => h.takes(call));
    if (hold) {
      // Taken before anything else runs: refresh() scans again, and a call
      // it finds must not see this hold still waiting.
      const held = hold.hold(info);
      this.refresh();
      const given = await held;
      answer =
        given !== undefined
          ? { response: toWireResponse(given, 'a released response') as Record<string, unknown> }
          : await this.#otherwise(call, info);
    } else {
      answer = await this.#otherwise(call, info);
    }
    try {
      writeFileAtomic(liveAnswerPath(genDir, call.seq), JSON.stringify(answer));
    } catch {
      // the generation is gone (reset, dispose): the call ends on its own
    }
  }

  /**
   * What a call gets that no hold changes: its queued response, else the
   * handler's, else what it claimed otherwise (a repeat, the fallback, the
   * default, or none).
   */
  async #otherwise(call: LiveCall, info: LiveCallInfo): Promise<LiveAnswer> {
    const handler = this.#handler;
    if (call.source === 'queue' || !handler) return { use: 'claimed' };
    try {
      const response = await handler(info);
      if (response === undefined) return { none: true };
      return {
        response: toWireResponse(
          response,
          `the response returned by handle() on mock "${this.#name}"`,
        ) as Record<string, unknown>,
      };
    } catch (error) {
      return {
        error: `the handle() function threw: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
  }
}

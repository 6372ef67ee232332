import { existsSync, readFileSync, unlinkSync } from 'node:fs';
import { tryUnlink, writeFileAtomic } from './atomic.js';
import { errnoCode, stateError } from './errors.js';
import {
  fragmentPath,
  generationPath,
  queuePath,
  routeChunkPath,
  routedPath,
  shStatePath,
} from './layout.js';
import { completeLines } from './lines.js';
import { firstFree } from './search.js';
import { renderFragment, shStateText } from './sh-fragment.js';
import { chunkOf, ROUTE_CHUNK, routeEntry, routeEntryOfLine } from './sh-route.js';
import { readText } from './state.js';
import type { WireResponse, WireState } from './types.js';

/** The last line of a route chunk. */
const CHUNK_END = ':';

/**
 * What the sh shim reads of one append (see sh-fragment.ts and sh-route.ts):
 * `sh/<n>` for each new response and, in a routed generation, its line in
 * the route chunks. Each file appears whole (a temp file renamed). If one
 * cannot be written (a full disk), the shim is switched off for this mock by
 * removing `state.sh`, which needs no space: calls still get every response,
 * from the runner.
 */
export class ShFiles {
  readonly #stateDir: string;
  readonly #state: WireState;
  readonly #genDir: string;
  #first = 0;
  #written = 0;
  #off = false;
  /** The route chunks this append rewrote (first and last), if any. */
  #chunks: [number, number] | undefined;

  constructor(stateDir: string, state: WireState) {
    this.#stateDir = stateDir;
    this.#state = state;
    this.#genDir = generationPath(stateDir, state.generation);
    this.#off = !state.config.sh;
  }

  /**
   * `sh/<n>` for queue lines `first`…, and an empty one ("ask the runner")
   * for any earlier line that has none (a writer that died between its
   * append and its `state.sh`, a line appended by hand); then the route
   * lines, when the generation is routed.
   */
  write(first: number, responses: readonly WireResponse[]): void {
    const { sh } = this.#state.config;
    this.#first = first;
    if (!sh || this.#off) {
      this.#off = true;
      return;
    }
    try {
      const path = (n: number) => fragmentPath(this.#genDir, n);
      const have = firstFree((n) => existsSync(path(n)), first - 1);
      for (let n = have; n < first; n++) writeFileAtomic(path(n), '');
      for (const [i, response] of responses.entries()) {
        writeFileAtomic(path(first + i), renderFragment(response, this.#state.config, sh));
        this.#written = i + 1;
      }
      if (existsSync(routedPath(this.#genDir))) this.#writeRoutes(first, responses);
    } catch (error) {
      this.#switchOff(error);
    }
  }

  /** `kept` lines were appended: the count in `state.sh`, and no `sh/<n>` past them. */
  settle(kept: number): void {
    if (this.#off || this.#first === 0) return; // off, or the append failed before it began
    for (let i = kept; i < this.#written; i++)
      tryUnlink(fragmentPath(this.#genDir, this.#first + i));
    if (this.#chunks && kept < this.#written) {
      // Route lines of responses that were not appended: the chunks go, so the
      // shell hands their calls over and the next append makes them again.
      for (let c = this.#chunks[0]; c <= this.#chunks[1]; c++) {
        tryUnlink(routeChunkPath(this.#genDir, c));
      }
    }
    try {
      const total = this.#first + kept - 1;
      writeFileAtomic(shStatePath(this.#stateDir), shStateText(this.#state, total));
    } catch (error) {
      this.#switchOff(error);
    }
  }

  /**
   * The route lines of responses `first`…, in the chunks that hold them.
   * Lines before `first` are kept from the chunks if the line of `first -
   * 1` is there; otherwise (the generation just became routed, or an
   * earlier append failed) every chunk is made again from the queue. A
   * line past `first - 1` left by an append that failed is dropped.
   */
  #writeRoutes(first: number, responses: readonly WireResponse[]): void {
    const entries = new Map<number, string>();
    responses.forEach((r, i) => {
      entries.set(first + i, routeEntry(first + i, { match: r.match, times: r.times }));
    });
    const prev = first - 1;
    const base = (c: number) => (c - 1) * ROUTE_CHUNK;
    const before = prev > 0 ? this.#chunkLines(chunkOf(prev)) : [];
    let from = chunkOf(first);
    let kept = chunkOf(prev) === from ? before.slice(0, prev - base(from)) : [];
    if (prev > 0 && before.length < prev - base(chunkOf(prev))) {
      from = 1;
      kept = [];
      // A last line without its newline (a hand edit) is line `prev`: the append puts one after it.
      const text = readText(queuePath(this.#genDir));
      const lines = text.endsWith('\n') ? completeLines(text) : text.split('\n');
      for (let n = 1; n <= prev; n++) {
        entries.set(n, routeEntryOfLine(lines[n - 1] ?? '', n, this.#genDir));
      }
    }
    const last = first + responses.length - 1;
    this.#chunks = [from, chunkOf(last)];
    for (let c = from; c <= chunkOf(last); c++) {
      const lines = c === from ? [...kept] : [];
      for (let n = base(c) + 1 + lines.length; n <= Math.min(c * ROUTE_CHUNK, last); n++) {
        lines.push(entries.get(n) as string);
      }
      // The last line makes `.` of a whole chunk succeed: failing, it was not read.
      writeFileAtomic(routeChunkPath(this.#genDir, c), `${lines.join('\n')}\n${CHUNK_END}\n`);
    }
  }

  /** The lines of route chunk `c` ([] if it is not there). */
  #chunkLines(c: number): string[] {
    try {
      const lines = completeLines(readFileSync(routeChunkPath(this.#genDir, c), 'utf8'));
      return lines.at(-1) === CHUNK_END ? lines.slice(0, -1) : lines;
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return [];
      throw error;
    }
  }

  #switchOff(error: unknown): void {
    this.#off = true;
    try {
      unlinkSync(shStatePath(this.#stateDir));
    } catch (cause) {
      if (errnoCode(cause) !== 'ENOENT') {
        throw stateError(error, fragmentPath(this.#genDir, this.#first), 'test');
      }
    }
  }
}

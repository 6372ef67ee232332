import { InvalidOptionError, InvalidResponseError } from '../internal/errors.js';
import { checkOptionKeys, optionError } from '../internal/options.js';
import type { Asks } from './asks.js';
import type { ReplayEntry } from './cassette-replay.js';
import type { ServerContext } from './context.js';
import { Expectation } from './expectation.js';
import { HeldRequest } from './hold.js';
import { describeRequestMatch, encodeMatch } from './match.js';
import type { ExpectState, FifoState } from './mirror.js';
import type { Turn } from './playbook/actions.js';
import { when } from './playbook/actions.js';
import { encodePlaybook } from './playbook/encode.js';
import { type PlaybookJson, playbookFromJson } from './playbook/json.js';
import { Playbook } from './playbook/playbook.js';
import type { PlaybookState } from './playbook/state.js';
import type { WireAnswer, WireRequestMatch } from './protocol.js';
import { summariseResponse } from './report.js';
import { toWireResponse } from './response.js';
import type {
  MockServerResponse,
  RequestMatch,
  ResponseHandler,
  WireHttpResponse,
} from './types.js';

/** The options of `expect()`. */
export interface ExpectOptions {
  /** Its name in `claimedBy`, reports and the unmatched 500. @default `expect#<n>` */
  name?: string;
  /** How many requests it answers (`'always'`: every one that fits). @default the response's `times`, else 1 */
  times?: number | 'always';
  /** `assertDone()` does not ask for it. @default the response's `optional`, else false */
  optional?: boolean;
}

/** The options of `playbook()`. */
export interface PlaybookOptions {
  /** Its name in `claimedBy`, records and reports. @default `playbook#<n>` */
  name?: string;
  /**
   * Which model requests it takes, beside being one (a POST to
   * `/v1/chat/completions`, `/v1/responses` or `/v1/messages`, each also
   * without `/v1`): give each of several agents at once its own, such as a
   * header of theirs or the model they name.
   * @default every model request
   * @example { headers: { 'x-agent': 'reviewer' } }
   */
  match?: RequestMatch;
}

/** The options of `hold()`. */
export interface HoldOptions {
  /** Pause after this many SSE events (or chunks) were written; without it, before the headers. */
  afterEvents?: number;
}

/**
 * The scripting calls of a MockServer — `expect()`, `enqueue()`, `hold()` —
 * checked on the test's thread (a bad match, response or option throws
 * there), recorded in the mirror, then posted to the worker, which sees
 * them before its next claim. Numbers (`expect#<n>`, `fifo#<n>`, hold ids)
 * count from 1 again after `reset()`.
 */
export class Scripting {
  readonly #ctx: ServerContext;
  readonly #asks: Asks;
  readonly #socketPath: string | undefined;
  #expects = 0;
  #fifo = 0;
  #holds = 0;
  #playbooks = 0;

  constructor(ctx: ServerContext, asks: Asks, socketPath: string | undefined) {
    this.#ctx = ctx;
    this.#asks = asks;
    this.#socketPath = socketPath;
  }

  expect(
    match: RequestMatch,
    response: MockServerResponse | ResponseHandler,
    options?: ExpectOptions,
  ): Expectation {
    const id = this.#expects + 1;
    const where = `expect() #${id}`;
    const o = checkOptionKeys(options, ['name', 'times', 'optional'], where);
    if (o.name !== undefined && (typeof o.name !== 'string' || o.name === '')) {
      throw optionError(where, 'name', 'a non-empty string', o.name);
    }
    const name = o.name ?? `expect#${id}`;
    if (o.name !== undefined) this.#checkName(where, o.name);
    const encoded = encodeMatch(match, where, (fn) => this.#asks.addPredicate(fn));
    const { answer, wire } = this.#answer(response, `the response passed to ${where}`);
    const times = checkTimes(where, o.times ?? wire?.times ?? 1);
    const optional = o.optional ?? wire?.optional ?? false;
    if (typeof optional !== 'boolean')
      throw optionError(where, 'optional', 'true or false', optional);
    const text = describeRequestMatch(encoded.wire);
    const state = this.#addExpectation(id, name, encoded.wire, text, answer, wire, times, optional);
    return new Expectation(this.#ctx, state);
  }

  /** A name of the test's own: not one shimkit gives, nor one another expectation or playbook has (claimedBy must tell them apart). */
  #checkName(where: string, name: string): void {
    if (/^(?:expect|fifo|playbook)#\d+$/.test(name) || name.startsWith('cassette:')) {
      throw new InvalidOptionError(
        `Expected the \`name\` option of ${where} to be a name of your own, got ${JSON.stringify(name)}: \`expect#<n>\`, \`fifo#<n>\`, \`playbook#<n>\` and \`cassette:…\` are the names shimkit gives in claimedBy.`,
      );
    }
    const { mirror } = this.#ctx;
    const expectation = [...mirror.expectations.values()].find((e) => e.name === name);
    const playbook = [...mirror.playbooks.values()].find((p) => p.name === name);
    const takenBy = expectation ? `expectation #${expectation.id}` : playbook && 'a playbook';
    if (takenBy) {
      throw new InvalidOptionError(
        `Expected the \`name\` option of ${where} to be a name no other expectation or playbook has, got ${JSON.stringify(name)}: ${takenBy} has it, and claimedBy could not tell the two apart. Give each its own name (reset() frees the names).`,
      );
    }
  }

  /**
   * PB: a playbook, in its place among the expectations (an earlier
   * expectation that fits a request wins, then playbooks in the order they
   * were made, then the FIFO). `turns` are `when()`'s, or the JSON form.
   */
  playbook(turns: readonly Turn[] | PlaybookJson, options?: PlaybookOptions): Playbook {
    const id = this.#playbooks + 1;
    const where = `playbook() #${id}`;
    const o = checkOptionKeys(options, ['name', 'match'], where);
    let list: readonly Turn[];
    let name = o.name;
    let match = o.match;
    if (Array.isArray(turns)) {
      if (turns.length === 0) {
        throw new InvalidOptionError(
          `Expected the turns of ${where} to be a non-empty array of when(prompt, actions), got [].`,
        );
      }
      // A turn made by hand ({ prompt, actions }) is checked as when() checks it.
      list = turns.map((turn: Turn) => when(turn?.prompt, turn?.actions));
    } else {
      const json = playbookFromJson(turns, where);
      list = json.turns;
      name ??= json.name;
      match ??= json.match;
    }
    if (name !== undefined && (typeof name !== 'string' || name === '')) {
      throw optionError(where, 'name', 'a non-empty string', name);
    }
    if (name !== undefined) this.#checkName(where, name);
    const encoded = encodeMatch(match ?? {}, where, (fn) => this.#asks.addPredicate(fn));
    // Its .then()s count themselves while they run: it is not done while one runs.
    let state: PlaybookState | undefined;
    const running = {
      begin: () => {
        if (state) state.running++;
      },
      end: () => {
        if (state) state.running--;
      },
    };
    const wire = encodePlaybook(list, id, name ?? `playbook#${id}`, encoded.wire, (fn, kind) =>
      this.#asks.addPlaybookFunction(fn, kind === 'then' ? running : undefined),
    );
    this.#playbooks = id;
    const gen = this.#ctx.mirror.gen;
    const made: PlaybookState = {
      id,
      gen,
      name: wire.name,
      steps: wire.actions.map((a) => ({
        step: a.step,
        turn: a.turn,
        describe: a.describe,
        thens: (a.calls ?? []).map((c) => c.thens.length > 0),
      })),
      consumed: 0,
      calls: [],
      results: [],
      turns: [],
      failures: [],
      requests: [],
      running: 0,
    };
    state = made;
    this.#ctx.mirror.playbooks.set(id, made);
    this.#ctx.post({ type: 'playbook', gen, playbook: wire });
    return new Playbook(this.#ctx, made);
  }

  /** HT-09: each interaction of a replayed cassette is an expectation for one request, before the test's own. */
  replay(entries: readonly ReplayEntry[]): void {
    for (const { name, match, matchText, wire } of entries) {
      this.#addExpectation(this.#expects + 1, name, match, matchText, { wire }, wire, 1, false);
    }
  }

  #addExpectation(
    id: number,
    name: string,
    match: WireRequestMatch,
    matchText: string,
    answer: WireAnswer,
    wire: WireHttpResponse | undefined,
    times: number,
    optional: boolean,
  ): ExpectState {
    this.#expects = id;
    const gen = this.#ctx.mirror.gen;
    const state: ExpectState = {
      id,
      gen,
      name,
      times,
      optional,
      summary: summariseResponse(wire),
      match: matchText,
      used: 0,
      requests: [],
    };
    this.#ctx.mirror.expectations.set(id, state);
    this.#ctx.post({ type: 'expect', gen, id, name, match, answer, times });
    return state;
  }

  enqueue(
    response: MockServerResponse | ResponseHandler | Array<MockServerResponse | ResponseHandler>,
  ): void {
    const list = Array.isArray(response) ? response : [response];
    const entries: Array<{ index: number; answer: WireAnswer; times: number }> = [];
    const states: FifoState[] = [];
    list.forEach((one, i) => {
      const index = this.#fifo + i + 1;
      const where = `enqueue() #${index}`;
      const { answer, wire } = this.#answer(one, `the response passed to ${where}`);
      const times = checkTimes(where, wire?.times ?? 1);
      entries.push({ index, answer, times });
      states.push({
        index,
        times,
        optional: wire?.optional ?? false,
        summary: summariseResponse(wire),
        used: 0,
      });
    });
    if (entries.length === 0) return;
    this.#fifo += entries.length;
    this.#ctx.mirror.fifo.push(...states);
    this.#ctx.post({ type: 'enqueue', gen: this.#ctx.mirror.gen, entries });
  }

  hold(match?: RequestMatch, options?: HoldOptions): HeldRequest {
    const id = this.#holds + 1;
    const where = `hold() #${id}`;
    const o = checkOptionKeys(options, ['afterEvents'], where);
    const after = o.afterEvents;
    if (after !== undefined && (!Number.isInteger(after) || after < 0)) {
      throw optionError(where, 'afterEvents', 'an integer from 0', after);
    }
    const encoded = match === undefined ? undefined : encodeMatch(match, where, () => 0);
    if (encoded?.predicate) {
      throw optionError(
        where,
        'match',
        'a match without a predicate (a hold is decided in the server thread)',
        match,
      );
    }
    this.#holds = id;
    const gen = this.#ctx.mirror.gen;
    const state = { gen, stage: 'waiting' as const, request: undefined };
    this.#ctx.mirror.holds.set(id, state);
    this.#ctx.post({ type: 'hold', gen, id, match: encoded?.wire, afterEvents: after });
    const label = `hold() #${id}${encoded ? ` ${describeRequestMatch(encoded.wire)}` : ''}`;
    return new HeldRequest(this.#ctx, id, state, after, label);
  }

  /** reset(): numbering starts again. */
  reset(): void {
    this.#expects = 0;
    this.#fifo = 0;
    this.#holds = 0;
    this.#playbooks = 0;
  }

  #answer(
    response: unknown,
    where: string,
  ): { answer: WireAnswer; wire: WireHttpResponse | undefined } {
    if (typeof response === 'function') {
      return {
        answer: { handler: this.#asks.addHandler(response as ResponseHandler) },
        wire: undefined,
      };
    }
    const wire = this.check(response, where);
    return { answer: { wire }, wire };
  }

  /**
   * A response checked for this server: toWireResponse, and no reset on a
   * Unix socket (`cut.how: 'rst'`, `resetBeforeHeaders`), which has no RST:
   * it would only be a plain close.
   */
  check(value: unknown, where: string): WireHttpResponse {
    const wire = toWireResponse(value, where);
    if (wire.cut?.how === 'rst' && this.#socketPath !== undefined) {
      throw new InvalidResponseError(
        `${where}: cut.how 'rst' needs a TCP connection, and this server listens on the Unix socket ${this.#socketPath}. Use 'fin' or 'stall', or listen on TCP (the default).`,
      );
    }
    if (wire.resetBeforeHeaders && this.#socketPath !== undefined) {
      throw new InvalidResponseError(
        `${where}: resetBeforeHeaders needs a TCP connection (a Unix socket has no reset: the client would see a plain close, not ECONNRESET), and this server listens on the Unix socket ${this.#socketPath}. Use wireBase64 '' (reply.wire('')) for an empty reply, or listen on TCP (the default).`,
      );
    }
    return wire;
  }
}

/** `times` as the worker counts it: `'always'` (Infinity in a wire response) never runs out. */
function checkTimes(where: string, times: unknown): number {
  if (times === 'always' || times === Number.POSITIVE_INFINITY) return Number.POSITIVE_INFINITY;
  if (!Number.isInteger(times) || (times as number) < 1 || (times as number) > 1_000_000) {
    throw optionError(where, 'times', "an integer from 1 to 1000000, or 'always'", times);
  }
  return times as number;
}

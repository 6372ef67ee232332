import { dropBody, type LiveRequest, liveRequest } from './logged.js';
import type { PlaybookState } from './playbook/state.js';
import { applyNews } from './playbook/state.js';
import type { PlaybookNews } from './playbook/wire.js';
import type { ServerEvent, WireClaim } from './protocol.js';
import type { LoggedRequest } from './types.js';

/**
 * The test thread's copy of the server's state (design §3 mirror.ts): the
 * log, and per expectation and FIFO entry how often it was claimed, rebuilt
 * from the worker's events in order. An event of an older generation (a
 * request still running when `reset()` came) is dropped.
 *
 * What a read needs is kept as it goes, so no read walks the log: the
 * count of responses not finished (settle.ts), and the bodies kept, oldest
 * first, for the `logBodyBudgetBytes` budget: past it the oldest bodies are
 * dropped (`bodyDropped`), counted in `bodiesDropped`.
 */

/** The uses that satisfy `times` (`'always'`, Infinity here, asks for one). */
export function wanted(times: number): number {
  return Number.isFinite(times) ? times : 1;
}

/** `3 times`, `1 time`, `'always'`: `times` in a message. */
export function timesText(times: number): string {
  return Number.isFinite(times)
    ? `${times} time${times === 1 ? '' : 's'}`
    : "'always' (at least once)";
}

/** One expectation, as the test's thread knows it. */
export interface ExpectState {
  id: number;
  gen: number;
  name: string;
  times: number;
  optional: boolean;
  /** `{sse:[3 events]}`, `a function` … for reports. */
  summary: string;
  /** `{ method: 'POST', path: '/v1/x' }`, for reports. */
  match: string;
  used: number;
  /** The requests it answered, in claim order. */
  requests: LoggedRequest[];
}

/** One FIFO entry. */
export interface FifoState {
  index: number;
  times: number;
  optional: boolean;
  summary: string;
  used: number;
}

/** Where a hold is, as its events said. */
export interface HoldState {
  gen: number;
  stage: 'waiting' | 'received' | 'blocked';
  request: LoggedRequest | undefined;
  /** Why a replacement cannot follow the held response's hold point, once the worker knows. */
  fixed?: string;
  /** `release()` was called (the worker may not have let it go yet). */
  released?: boolean;
}

interface Meta {
  claim: WireClaim;
  unmatched: boolean;
  /** Its response has no `endedAt` yet. */
  running: boolean;
}

export class Mirror {
  gen = 1;
  /** In seq order. */
  readonly entries: LoggedRequest[] = [];
  readonly #bySeq = new Map<number, { live: LiveRequest; meta: Meta }>();
  readonly expectations = new Map<number, ExpectState>();
  fifo: FifoState[] = [];
  readonly holds = new Map<number, HoldState>();
  readonly playbooks = new Map<number, PlaybookState>();
  /** What a read of an entry's `response` or `error` does first: read the worker's journal. */
  sync: () => void = () => {};
  /** Entries whose response has no `endedAt` yet. */
  unfinished = 0;
  /** Bodies dropped for the budget since the last reset. */
  bodiesDropped = 0;
  readonly #budget: number;
  /** Entries with a body, oldest first, from `#keptHead` on. */
  #kept: LoggedRequest[] = [];
  #keptHead = 0;
  #keptBytes = 0;
  /** Called after every event applied (the waits check their condition). */
  onChange: () => void = () => {};
  /** A question of the worker for the test's thread. */
  onAsk: (event: Extract<ServerEvent, { type: 'ask' }>) => void = () => {};
  /** The worker stopped waiting for a question. */
  onAskDropped: (ask: number) => void = () => {};

  /** `bodyBudget`: the bytes of request bodies the log keeps in all (`logBodyBytes` each). */
  constructor(bodyBudget = Number.POSITIVE_INFINITY) {
    this.#budget = bodyBudget;
  }

  apply(event: ServerEvent): void {
    if ('gen' in event && event.gen !== this.gen) return;
    switch (event.type) {
      case 'entry': {
        const { entry } = event;
        const live = liveRequest(entry, () => this.sync());
        const request = live.request;
        this.#insert(request);
        const running = entry.endedAt === undefined;
        if (running) this.unfinished++;
        this.#keep(request);
        this.#bySeq.set(entry.seq, {
          live,
          meta: { claim: entry.claim, unmatched: entry.unmatched, running },
        });
        const claim = entry.claim;
        if (claim && 'expect' in claim) {
          const e = this.expectations.get(claim.expect);
          if (e) {
            e.used++;
            e.requests.push(request);
          }
        } else if (claim && 'playbook' in claim) {
          this.playbooks.get(claim.playbook)?.requests.push(request);
        } else if (claim) {
          const f = this.fifo[claim.fifo - 1];
          if (f) f.used++;
        }
        // A claimed entry is written with its first change: it may come given back already.
        if (entry.requeued) this.#givenBack(request, claim);
        if (event.news) this.#news(event.news.id, event.news.json);
        break;
      }
      case 'update': {
        const known = this.#bySeq.get(event.seq);
        if (!known) break;
        known.live.patch(event.patch);
        if (known.meta.running && event.patch.endedAt !== undefined) {
          known.meta.running = false;
          this.unfinished--;
        }
        if (event.patch.requeued) this.#givenBack(known.live.request, known.meta.claim);
        break;
      }
      case 'held': {
        const hold = this.holds.get(event.id);
        if (!hold) break;
        hold.request ??= this.#bySeq.get(event.seq)?.live.request;
        if (hold.stage !== 'blocked') hold.stage = event.stage;
        if (event.fixed !== undefined) hold.fixed = event.fixed;
        break;
      }
      case 'playbook':
        this.#news(event.id, event.json);
        break;
      case 'ask':
        this.onAsk(event);
        return;
      case 'ask-dropped':
        this.onAskDropped(event.ask);
        return;
      default:
        return;
    }
    this.onChange();
  }

  /** The requests the `unmatched` policy answered. */
  unmatched(): LoggedRequest[] {
    return this.entries.filter((r) => this.#bySeq.get(r.seq)?.meta.unmatched === true);
  }

  /** A new, empty generation. */
  reset(gen: number): void {
    this.gen = gen;
    this.entries.length = 0;
    this.#bySeq.clear();
    this.unfinished = 0;
    this.bodiesDropped = 0;
    this.#kept = [];
    this.#keptHead = 0;
    this.#keptBytes = 0;
    this.expectations.clear();
    this.fifo = [];
    this.holds.clear();
    this.playbooks.clear();
  }

  /** A retryable response its client left before the end: that use does not count. */
  #givenBack(request: LoggedRequest, claim: WireClaim): void {
    if (claim && 'expect' in claim) {
      const e = this.expectations.get(claim.expect);
      if (!e) return;
      e.used--;
      const at = e.requests.indexOf(request);
      if (at !== -1) e.requests.splice(at, 1);
    } else if (claim && 'fifo' in claim) {
      const f = this.fifo[claim.fifo - 1];
      if (f) f.used--;
    }
  }

  /** Playbook `id`'s news (the JSON of a PlaybookNews[]). */
  #news(id: number, json: string): void {
    const state = this.playbooks.get(id);
    if (state) for (const news of JSON.parse(json) as PlaybookNews[]) applyNews(state, news);
  }

  /** Count `request`'s body against the budget; drop the oldest bodies past it. */
  #keep(request: LoggedRequest): void {
    if (request.body.length === 0) return;
    this.#kept.push(request);
    this.#keptBytes += request.body.length;
    while (this.#keptBytes > this.#budget && this.#keptHead < this.#kept.length) {
      const oldest = this.#kept[this.#keptHead] as LoggedRequest;
      this.#kept[this.#keptHead++] = undefined as unknown as LoggedRequest;
      this.#keptBytes -= oldest.body.length;
      dropBody(oldest);
      this.bodiesDropped++;
    }
    if (this.#keptHead > 1024 && this.#keptHead * 2 > this.#kept.length) {
      this.#kept = this.#kept.slice(this.#keptHead);
      this.#keptHead = 0;
    }
  }

  #insert(request: LoggedRequest): void {
    const { entries } = this;
    let i = entries.length;
    while (i > 0 && (entries[i - 1] as LoggedRequest).seq > request.seq) i--;
    entries.splice(i, 0, request);
  }
}

import { DisposedError, WaitTimeoutError } from '../internal/errors.js';
import { StreamEndedError } from './errors.js';
import type { Rule, Way } from './faults.js';
import type { FrameHold, WaitEnd } from './hold.js';
import { count } from './words.js';

/** @internal What the waits read from their proxy. */
export interface WaitSource {
  /** `Proxy on <address>`, for messages. */
  readonly name: string;
  /** Frames forwarded that way so far, over all connections. */
  forwarded(way: Way): number;
  /** `forwarded so far: c2s 3, s2c 2 over 1 connection` */
  progress(): string;
}

/**
 * @internal A proxy's waits (`waitForFrames()`, and its holds' `waitHeld()`):
 * met by its counters, and rejected at once when they no longer can be —
 * with a `DisposedError` once the proxy is closed, with a `StreamEndedError`
 * once a direction can carry nothing more (a stdio child is gone).
 */
export class ProxyWaits {
  readonly #waiters = new Set<() => void>();
  readonly #holds = new Set<{ hold: FrameHold; ways: ReadonlySet<Way> }>();
  /** Why no more frames can go that way, for the ways that ended. */
  readonly #ended = new Map<Way, WaitEnd>();
  #closed: WaitEnd | undefined;

  constructor(private readonly source: WaitSource) {}

  /** The counters moved: resolve the waits they meet. */
  notify(): void {
    if (this.#waiters.size === 0) return;
    for (const check of [...this.#waiters]) check();
  }

  /** A hold the proxy made: its waits end with the proxy, or with the ways it catches frames on. */
  track(rule: Rule): void {
    if (!rule.hold) return;
    const entry = { hold: rule.hold, ways: rule.ways };
    this.#holds.add(entry);
    const end = this.#closed ?? this.#endOf(entry.ways);
    if (end) rule.hold.end(end);
  }

  /** Resolve once `n` frames went `way`; reject after `timeoutMs`, or at once once they never can. */
  wait(way: Way, n: number, timeoutMs: number): Promise<void> {
    const { source } = this;
    if (source.forwarded(way) >= n) return Promise.resolve();
    const what = `proxy.waitForFrames() waited for ${count(n, 'frame')} ${way}`;
    const ended = () => this.#closed ?? this.#ended.get(way);
    const early = ended();
    if (early) return Promise.reject(early(what, source.progress(), source.forwarded(way), n));
    return new Promise<void>((resolve, reject) => {
      const check = () => {
        const end = ended();
        if (source.forwarded(way) < n && !end) return;
        this.#waiters.delete(check);
        clearTimeout(timer);
        if (source.forwarded(way) >= n) resolve();
        else reject((end as WaitEnd)(what, source.progress(), source.forwarded(way), n));
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(
          new WaitTimeoutError(
            `${source.name}: waited ${timeoutMs} ms for ${count(n, 'frame')} ${way}; ${source.progress()}.`,
          ),
        );
      }, timeoutMs);
      this.#waiters.add(check);
    });
  }

  /** The proxy closed: every wait not met rejects with a `DisposedError`, now and later. */
  close(): void {
    if (this.#closed) return;
    const end: WaitEnd = (what, got) =>
      new DisposedError(this.source.name, `was closed while ${what}; ${got}.`);
    this.#closed = end;
    for (const { hold } of this.#holds) hold.end(end);
    this.notify();
  }

  /** Nothing more can go `way` (`how` says why, e.g. "the child (pid 42) was killed by SIGKILL"). */
  endWay(way: Way, how: string): void {
    if (this.#ended.has(way) || this.#closed) return;
    this.#ended.set(way, (what, got, received, expected) => {
      return new StreamEndedError(
        `${this.source.name}: ${how}, so no more frames can go ${way}; ${what}; ${got}.`,
        received,
        expected,
      );
    });
    for (const { hold, ways } of this.#holds) {
      const end = this.#endOf(ways);
      if (end) hold.end(end);
    }
    this.notify();
  }

  /** How a wait on all of `ways` ends, once every one of them has. */
  #endOf(ways: ReadonlySet<Way>): WaitEnd | undefined {
    let end: WaitEnd | undefined;
    for (const way of ways) {
      end = this.#ended.get(way);
      if (!end) return undefined;
    }
    return end;
  }
}

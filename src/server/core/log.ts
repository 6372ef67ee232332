import type { JournalWriter } from '../../internal/journal.js';
import { eventRecord, isUrgent } from '../event-record.js';
import type { EntryPatch, ServerEvent, WireEntry } from '../protocol.js';

/**
 * The worker's half of the request log: entries and their changes go to the
 * test's thread as events in the shared journal, each one readable there
 * before the byte it describes is written (design §4 "log before bytes").
 * Only events the test's thread acts on by itself (asks, listening, …), or
 * any while it waits for one, wake it. Progress counters of a response
 * still streaming are coalesced to one event per request per worker turn;
 * any other change of that request takes the pending counters with it, so
 * the test's thread never sees them go back.
 *
 * The entry of a claimed request (`claimed()`) waits for the first change
 * of it, which is merged in — its status, its end or cut: what comes before
 * any byte of its answer —, for any other event of the log, or for the end
 * of the turn, whichever comes first: an answer written at once is then one
 * event (and its `endedAt` another), not four.
 */
export class EntryLog {
  readonly #journal: JournalWriter;
  readonly #pending = new Map<number, { gen: number; seq: number; patch: EntryPatch }>();
  #scheduled = false;
  /** The claimed entry not written yet. */
  #held: { gen: number; entry: WireEntry } | undefined;
  readonly #writeHeld = () => this.#release();

  constructor(journal: JournalWriter) {
    this.#journal = journal;
  }

  post(event: ServerEvent): void {
    this.#release();
    this.#write(event);
  }

  /** A request's entry; a playbook's news about it travels in the same message. */
  entry(gen: number, entry: WireEntry, news?: { id: number; json: string }): void {
    this.post(
      news === undefined ? { type: 'entry', gen, entry } : { type: 'entry', gen, entry, news },
    );
  }

  /**
   * The entry of a claimed request: written with its first change (merged
   * into `entry`, which the log then owns), before any other event, or at
   * the end of this turn.
   */
  claimed(gen: number, entry: WireEntry): void {
    this.#release();
    this.#held = { gen, entry };
    queueMicrotask(this.#writeHeld);
  }

  /** Post a change now (with any counters still pending for the request). */
  patch(gen: number, seq: number, patch: EntryPatch): void {
    let pending: { patch: EntryPatch } | undefined;
    if (this.#pending.size > 0) {
      const key = keyOf(gen, seq);
      pending = this.#pending.get(key);
      if (pending) this.#pending.delete(key);
    }
    const change = pending ? applyPatch(pending.patch, patch) : patch;
    const held = this.#held;
    if (held !== undefined && held.gen === gen && held.entry.seq === seq) {
      this.#held = undefined;
      this.#write({ type: 'entry', gen, entry: applyPatch(held.entry, change) });
      return;
    }
    this.post({ type: 'update', gen, seq, patch: change });
  }

  /** Counters moved: posted at the end of this turn, merged with other moves in it. */
  progress(gen: number, seq: number, bytesSent: number, events: number): void {
    const key = keyOf(gen, seq);
    const pending = this.#pending.get(key);
    if (pending) {
      pending.patch.bytesSent = bytesSent;
      pending.patch.events = events;
    } else {
      this.#pending.set(key, { gen, seq, patch: { bytesSent, events } });
    }
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** Post every pending counter (and a claimed entry not written yet). */
  flush(): void {
    this.#release();
    this.#scheduled = false;
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const { gen, seq, patch } of pending) this.post({ type: 'update', gen, seq, patch });
  }

  #release(): void {
    const held = this.#held;
    if (held === undefined) return;
    this.#held = undefined;
    this.#write({ type: 'entry', gen: held.gen, entry: held.entry });
  }

  #write(event: ServerEvent): void {
    const { text, bytes } = eventRecord(event);
    this.#journal.append(text, bytes, isUrgent(event));
  }
}

/** A request's key among the pending counters: a number, so no string is made per event. */
function keyOf(gen: number, seq: number): number {
  return gen * 2 ** 32 + seq;
}

/**
 * Copy the fields `patch` has into `target`, one by one (a spread or
 * `Object.assign()` over objects of many shapes takes the slow path, and
 * this runs for every request).
 */
export function applyPatch<T extends EntryPatch>(target: T, patch: EntryPatch): T {
  if (patch.status !== undefined) target.status = patch.status;
  if (patch.bytesSent !== undefined) target.bytesSent = patch.bytesSent;
  if (patch.events !== undefined) target.events = patch.events;
  if (patch.endedBy !== undefined) target.endedBy = patch.endedBy;
  if (patch.error !== undefined) target.error = patch.error;
  if (patch.startedAt !== undefined) target.startedAt = patch.startedAt;
  if (patch.endedAt !== undefined) target.endedAt = patch.endedAt;
  if (patch.requeued !== undefined) target.requeued = patch.requeued;
  return target;
}

import type { MessagePort } from 'node:worker_threads';
import type { EntryPatch, ServerEvent, WireEntry } from '../protocol.js';

/**
 * The worker's half of the request log: entries and their changes go to the
 * test's thread as events, each posted before the byte it describes (design
 * §4 "log before bytes"). Progress counters of a response still streaming
 * are coalesced to one message per request per worker turn; any other
 * change of that request takes the pending counters with it, so the test's
 * thread never sees them go back.
 */
export class EntryLog {
  readonly #port: MessagePort;
  readonly #pending = new Map<string, { gen: number; seq: number; patch: EntryPatch }>();
  #scheduled = false;

  constructor(port: MessagePort) {
    this.#port = port;
  }

  post(event: ServerEvent): void {
    this.#port.postMessage(event);
  }

  /** A request's entry; a playbook's news about it travels in the same message. */
  entry(gen: number, entry: WireEntry, news?: { id: number; json: string }): void {
    this.post(
      news === undefined ? { type: 'entry', gen, entry } : { type: 'entry', gen, entry, news },
    );
  }

  /** Post a change now (with any counters still pending for the request). */
  patch(gen: number, seq: number, patch: EntryPatch): void {
    const key = `${gen}:${seq}`;
    const pending = this.#pending.get(key);
    if (pending) this.#pending.delete(key);
    this.post({ type: 'update', gen, seq, patch: { ...pending?.patch, ...patch } });
  }

  /** Counters moved: posted at the end of this turn, merged with other moves in it. */
  progress(gen: number, seq: number, bytesSent: number, events: number): void {
    const key = `${gen}:${seq}`;
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

  /** Post every pending counter. */
  flush(): void {
    this.#scheduled = false;
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const { gen, seq, patch } of pending) this.post({ type: 'update', gen, seq, patch });
  }
}

// The worker's events as records of the journal both threads share
// (src/internal/journal.ts): JSON text, and the body of the request an event
// carries (an entry's, an ask's) as bytes beside it. Every ServerEvent is
// JSON data but for that body; a key whose value is undefined is left out,
// which the test's thread reads the same way. Both sides import this file.
import type { ServerEvent, WireEntry } from './protocol.js';

/** Whether the test's thread acts on the event by itself (not only when it reads or waits). */
export function isUrgent(event: ServerEvent): boolean {
  return event.type !== 'entry' && event.type !== 'update' && event.type !== 'held';
}

/** `event` as a record: its JSON without the body, and the body. */
export function eventRecord(event: ServerEvent): { text: string; bytes: Uint8Array | undefined } {
  if (event.type === 'entry') return withoutBody(event.entry, event);
  if (event.type === 'ask') return withoutBody(event.request, event);
  return { text: JSON.stringify(event), bytes: undefined };
}

/**
 * The JSON of `event` with `entry.body` left out, and that body. The body
 * is unset only while JSON.stringify runs (synchronous, no toJSON of ours
 * inside): copying the entry without it, for every request, took the slow
 * path of an object spread.
 */
function withoutBody(
  entry: WireEntry,
  event: ServerEvent,
): { text: string; bytes: Uint8Array | undefined } {
  const bytes = entry.body;
  (entry as { body: Uint8Array | undefined }).body = undefined;
  try {
    return { text: JSON.stringify(event), bytes };
  } finally {
    entry.body = bytes;
  }
}

/** The event a record holds, its body put back. */
export function eventOf(text: string, bytes: Uint8Array): ServerEvent {
  const event = JSON.parse(text) as ServerEvent;
  if (event.type === 'entry') (event.entry as WireEntry).body = bytes;
  else if (event.type === 'ask') (event.request as WireEntry).body = bytes;
  return event;
}

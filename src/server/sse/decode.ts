import type { SseEvent } from '../types.js';
import { sseEventText } from './encode.js';

// Reading an event stream back as it arrives (the cassette's recorder,
// HT-09): the bytes split into events — blocks that end in a blank line,
// with CRLF, CR and LF line ends as the WHATWG rules have them — and each
// block read back into the SseEvent that encode.ts writes as exactly those
// bytes. A block shimkit would write differently (`data:x` without the
// space, CRLF line ends, an unknown field) is not read: the recorder keeps
// such a stream as bytes, so a replay still sends what was recorded.
// This file is in the worker bundle: it imports only encode.ts.

const LINE_END = /\r\n|\r|\n/g;

/** Splits an event stream into its events' text, chunk by chunk. */
export class SseSplitter {
  readonly #decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  #text = '';
  /** Where the next line starts in `#text` (the current block starts at 0). */
  #scan = 0;
  /** Not UTF-8: no more blocks are read. */
  #broken = false;

  /** Whether the stream so far was UTF-8. */
  get broken(): boolean {
    return this.#broken;
  }

  /** The events this chunk completed, each block's text with its blank line. */
  push(chunk: Uint8Array): string[] {
    if (this.#broken) return [];
    try {
      this.#text += this.#decoder.decode(chunk, { stream: true });
    } catch {
      this.#broken = true;
      return [];
    }
    const blocks: string[] = [];
    let start = 0;
    for (;;) {
      LINE_END.lastIndex = this.#scan;
      const end = LINE_END.exec(this.#text);
      // A CR that ends the text may be the first half of a CRLF: wait for more.
      if (!end || (end[0] === '\r' && end.index === this.#text.length - 1)) break;
      const empty = end.index === this.#scan;
      this.#scan = end.index + end[0].length;
      if (empty) {
        blocks.push(this.#text.slice(start, this.#scan));
        start = this.#scan;
      }
    }
    this.#text = this.#text.slice(start);
    this.#scan -= start;
    return blocks;
  }

  /** Whether the stream ended between events (nothing left over, all of it UTF-8). */
  endsClean(): boolean {
    if (this.#broken) return false;
    try {
      return this.#text + this.#decoder.decode() === '';
    } catch {
      return false;
    }
  }
}

/**
 * The event that encode.ts writes as exactly `block` (data that is a JSON
 * object or array written compactly comes back as that value), or
 * undefined when it writes no block so.
 */
export function readSseEvent(block: string): SseEvent | undefined {
  const event: SseEvent = {};
  const comments: string[] = [];
  const data: string[] = [];
  for (const line of block.split(LINE_END)) {
    if (line === '') continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const raw = colon === -1 ? '' : line.slice(colon + 1);
    const value = raw.startsWith(' ') ? raw.slice(1) : raw;
    if (field === '') comments.push(value);
    else if (field === 'data') data.push(value);
    else if (field === 'event') event.event = value;
    else if (field === 'id') event.id = value;
    else if (field === 'retry' && /^\d+$/.test(value)) event.retry = Number(value);
    else return undefined;
  }
  if (comments.length > 0) event.comment = comments.join('\n');
  if (data.length > 0) event.data = dataValue(data.join('\n'));
  try {
    return sseEventText(event) === block ? event : undefined;
  } catch {
    return undefined;
  }
}

/** A JSON object or array, when the text is its compact JSON; else the text. */
function dataValue(text: string): unknown {
  if (!text.startsWith('{') && !text.startsWith('[')) return text;
  try {
    const value: unknown = JSON.parse(text);
    return JSON.stringify(value) === text ? value : text;
  } catch {
    return text;
  }
}

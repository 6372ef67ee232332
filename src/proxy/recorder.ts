import type { FaultAction, Rule, Way } from './faults.js';

/** One frame as `record: true` kept it: when, where, how long, its start, and what a fault did. */
export interface FrameRecord {
  /** Milliseconds since the proxy started, on its clock. */
  at: number;
  /** 1-based, in accept order. */
  connection: number;
  direction: Way;
  /** 1-based, per connection per direction. */
  frame: number;
  /** The body length as it arrived. */
  length: number;
  /** The body as it arrived, up to `record.maxBodyBytes`. */
  body: Buffer;
  /**
   * The fault that hit it (`'hold'` for `proxy.hold()`), if any. A frame cut
   * short is only ever hit by a `drop`: no other fault applies to it.
   */
  fault: FaultAction | 'hold' | undefined;
  /**
   * The source ended its stream in the middle of this frame: `body` is what
   * arrived of it, `length` what its header declares (or, with no header
   * saying, the bytes that arrived).
   */
  cutShort: boolean;
  /** The frame as one line of `proxy.timeline()`. */
  line: string;
}

/** Options of `record`. */
export interface RecordOptions {
  /** Frames kept; past that the oldest go (the timeline says how many). @default 10000 */
  maxFrames?: number;
  /** Body bytes kept per frame. @default 4096 */
  maxBodyBytes?: number;
}

/** @internal The last `maxFrames` frames of a proxy, with the faults applied. */
export class Recorder {
  readonly #ring: FrameRecord[] = [];
  #next = 0; // where the next record goes once the ring is full
  #forgotten = 0;

  constructor(
    private readonly maxFrames: number,
    readonly maxBodyBytes: number,
  ) {}

  /** `body` is the body or its start (at least `maxBodyBytes` of it); `length` the whole body's (as its header declares). */
  add(
    at: number,
    connection: number,
    direction: Way,
    frame: number,
    body: Buffer,
    length: number,
    rule: Rule | undefined,
    /** Set for a frame cut short by end of stream: its body bytes that arrived. */
    arrived?: number,
  ): FrameRecord {
    const cutShort = arrived !== undefined;
    const fault = rule?.hold ? 'hold' : rule?.action;
    const kept = Buffer.from(body.subarray(0, this.maxBodyBytes));
    const record: FrameRecord = {
      at,
      connection,
      direction,
      frame,
      length,
      body: kept,
      fault: cutShort && fault !== 'drop' ? undefined : fault,
      cutShort,
      line: cutShort
        ? formatCutShort(at, connection, direction, frame, kept, arrived, length, fault)
        : formatLine(at, connection, direction, frame, kept, length, rule),
    };
    if (this.#ring.length < this.maxFrames) this.#ring.push(record);
    else {
      this.#ring[this.#next] = record;
      this.#next = (this.#next + 1) % this.maxFrames;
      this.#forgotten += 1;
    }
    return record;
  }

  records(): FrameRecord[] {
    return [...this.#ring.slice(this.#next), ...this.#ring.slice(0, this.#next)];
  }

  timeline(): string {
    const lines = this.records().map((r) => r.line);
    if (this.#forgotten > 0) {
      lines.unshift(
        `(${this.#forgotten} earlier frame${this.#forgotten === 1 ? ' is' : 's are'} not shown: record.maxFrames is ${this.maxFrames})`,
      );
    }
    return lines.join('\n');
  }
}

const PREVIEW = 40;

/** `   12.3 ms  c2s #3  conn 1  42 B  {"method":"ping"…}  DROPPED` */
function formatLine(
  at: number,
  connection: number,
  direction: Way,
  frame: number,
  body: Buffer,
  length: number,
  rule: Rule | undefined,
): string {
  const time = `${at.toFixed(1).padStart(8)} ms`;
  const label = rule ? `  ${faultLabel(rule, length)}` : '';
  return `${time}  ${direction} #${frame}  conn ${connection}  ${length} B  ${preview(body, length)}${label}`;
}

/** `   12.3 ms  c2s #2  conn 1  3 of 10 B  abc  CUT SHORT by end of stream: DROPPED` */
function formatCutShort(
  at: number,
  connection: number,
  direction: Way,
  frame: number,
  body: Buffer,
  arrived: number,
  length: number,
  fault: FaultAction | 'hold' | undefined,
): string {
  const time = `${at.toFixed(1).padStart(8)} ms`;
  const size = arrived < length ? `${arrived} of ${length} B` : `${arrived} B`;
  const what =
    fault === 'drop' ? ': DROPPED' : fault !== undefined ? ` (${fault} not applied)` : '';
  return `${time}  ${direction} #${frame}  conn ${connection}  ${size}  ${preview(body, arrived)}  CUT SHORT by end of stream${what}`;
}

/** Text as it is (tabs and line ends escaped), or hex for bytes that are not text; cut at 40 characters. */
export function preview(body: Buffer, length = body.length): string {
  if (length === 0) return '(empty)';
  const head = body.subarray(0, PREVIEW * 4);
  let text = head.toString('utf8');
  if (length > head.length) text = text.replace(/\uFFFD+$/, ''); // a character cut in two
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters mark bytes that are not text
  if (text.includes('\uFFFD') || /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text)) {
    const hex = [...body.subarray(0, 16)].map((b) => b.toString(16).padStart(2, '0')).join(' ');
    return `<${hex}${length > 16 ? ' …' : ''}>`;
  }
  const chars = [...text.replace(/[\t\r\n]/g, (c) => JSON.stringify(c).slice(1, -1))];
  return chars.length > PREVIEW || length > head.length
    ? `${chars.slice(0, PREVIEW).join('')}…`
    : chars.join('');
}

function faultLabel(rule: Rule, length: number): string {
  if (rule.hold) return 'HELD';
  const keep = Math.min(rule.keepBytes ?? Math.floor(length / 2), length);
  switch (rule.action) {
    case 'drop':
      return 'DROPPED';
    case 'duplicate':
      return 'DUPLICATED';
    case 'delay':
      return `DELAYED ${rule.delayMs} ms`;
    case 'corrupt':
      return `CORRUPTED (${rule.bits} bit${rule.bits === 1 ? '' : 's'})`;
    case 'truncate':
      return `TRUNCATED to ${keep} B`;
    case 'reorder':
      return 'REORDERED (after the next frame)';
    case 'sever-mid-frame':
      return `SEVERED mid-frame after ${keep} B (${rule.mode.toUpperCase()})`;
    case 'sever-after':
      return `SEVERED after it (${rule.mode.toUpperCase()})`;
    case 'reset':
      return 'RESET';
    case 'slice':
      return `SLICED into ${rule.sliceBytes} B pieces`;
  }
}

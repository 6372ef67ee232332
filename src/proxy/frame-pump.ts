import type { FaultAction, Rule, Way } from './faults.js';
import { draw } from './faults.js';
import type { Outbox } from './outbox.js';

/** @internal What a pump needs from its connection and proxy. */
export interface PumpContext {
  readonly connection: number;
  readonly maxFrameBytes: number;
  readonly seed: number;
  now(): number;
  /** The rule that hits this frame, if any. */
  match(way: Way, frame: number): Rule | undefined;
  /** Whether any rule could hit this direction of this connection (else skip matching). */
  mayHit(way: Way): boolean;
  tooLarge(way: Way, frame: number, declaredLength: number, atLeast?: boolean): void;
  /** The bytes are not in this framing (lines, content-length and custom framings). */
  malformed(way: Way, frame: number, reason: string): void;
  faulted(way: Way, frame: number, action: FaultAction): void;
  /** The source ended its stream in the middle of a frame (counted; kept with `record`). */
  cutShort(way: Way, cut: CutShort): void;
  sever(mode: 'fin' | 'rst', after?: Outbox): void;
  /** Report each frame passed on (a delayed or held one when queued; only when someone listens). */
  onFrame: ((way: Way, frame: number, length: number) => void) | undefined;
  /**
   * Keep each frame (`record: true`): the start of its body (at least
   * `recordBytes` of it, when it has that many), its length and the rule
   * that hit it. Frames nothing targets still stream through.
   */
  record:
    | ((way: Way, frame: number, body: Buffer, length: number, rule: Rule | undefined) => void)
    | undefined;
  /** How many body bytes `record` keeps. */
  readonly recordBytes: number;
}

/** @internal A whole frame a fault (or a reorder waiting for its release) cut out of the stream. */
export interface Target {
  frame: number;
  /** undefined: captured only to release a reordered frame after it. */
  rule: Rule | undefined;
  /** The frame's bytes as they arrived. */
  wire: Buffer;
  body: Buffer;
  /** Where `body` lies in `wire`; undefined when only `encode()` can rebuild the frame. */
  span: [number, number] | undefined;
}

/** @internal What arrived of a frame the source cut short by ending its stream. */
export interface CutShort {
  frame: number;
  /** The rule that targets it, if any (none applies, but `drop`). */
  rule: Rule | undefined;
  /** Its bytes not forwarded yet (all of them, or a header held back); undefined when they streamed through. */
  wire: Buffer | undefined;
  /** What arrived of its body (with `record`, at least its start). */
  body: Buffer;
  /** Body bytes that arrived. */
  arrived: number;
  /** The body length its header declares, or `arrived` when no header says. */
  length: number;
}

/**
 * @internal What both kinds of pump share: acting out the fault that hits a
 * frame once it has been cut out whole, and holding a reordered frame until
 * the next one has gone out.
 */
export abstract class FramePump {
  protected held: Buffer | undefined;
  protected stopped = false;

  constructor(
    protected readonly way: Way,
    protected readonly out: Outbox,
    protected readonly ctx: PumpContext,
  ) {}

  stop(): void {
    this.stopped = true;
  }

  /** Whether this pump still holds a view of a chunk it was given (a frame cut out, record's start of one, a reordered frame). */
  abstract holdsChunks(): boolean;

  /** A frame with this body, from nothing but the body (custom framers). */
  protected abstract encode(body: Buffer): Buffer;

  /** The bytes before a body (`span[0]` of them), saying `length` instead. */
  protected abstract resizeHeader(header: Buffer, length: number): Buffer;

  /** Whether `wire` reads back as exactly this one body (custom framers; the others cannot be put out of step by a flip). */
  protected readsAs: ((wire: Buffer, body: Buffer) => boolean) | undefined;

  /** `target`'s frame with a new body: its header says the new length, its trailer (a CR LF) stays. */
  #rebuild(target: Target, body: Buffer): Buffer {
    const { wire, span } = target;
    if (!span) return this.encode(body);
    return Buffer.concat([
      this.resizeHeader(wire.subarray(0, span[0]), body.length),
      body,
      wire.subarray(span[1]),
    ]);
  }

  /** Byte values a `corrupt` fault must not write into a body (they would end the frame). */
  protected reserved: ReadonlySet<number> | undefined;

  protected apply(target: Target): void {
    const { rule, frame, wire, body } = target;
    this.ctx.record?.(this.way, frame, body, body.length, rule);
    const release = this.held;
    this.held = undefined;
    if (rule?.hold) {
      this.out.hold(wire, rule.hold);
      this.ctx.onFrame?.(this.way, frame, body.length);
      if (release) this.out.push(release, 1);
      return;
    }
    const action = rule?.action;
    if (rule && action) this.ctx.faulted(this.way, frame, action);
    switch (action) {
      case undefined:
        this.pass(wire, frame, body.length);
        break;
      case 'drop':
        break;
      case 'duplicate':
        this.pass(wire, frame, body.length);
        this.pass(wire, frame, body.length);
        break;
      case 'delay':
        this.out.push(wire, 1, this.ctx.now() + (rule?.delayMs ?? 0));
        this.ctx.onFrame?.(this.way, frame, body.length);
        break;
      case 'corrupt':
        this.pass(this.#corrupt(target, rule as Rule), frame, body.length);
        break;
      case 'truncate': {
        const keep = kept(rule as Rule, body.length);
        this.pass(this.#rebuild(target, body.subarray(0, keep)), frame, keep);
        break;
      }
      case 'reorder':
        this.held = wire; // goes out right after the next frame
        break;
      case 'sever-mid-frame': {
        // A custom frame's body is taken to end it; never is the whole frame let through.
        const keep = kept(rule as Rule, body.length);
        const start = target.span ? target.span[0] : Math.max(0, wire.length - body.length);
        this.out.push(wire.subarray(0, Math.min(start + keep, wire.length - 1)), 0);
        this.stopped = true;
        this.ctx.sever((rule as Rule).mode, this.out);
        return;
      }
      case 'sever-after':
        this.pass(wire, frame, body.length);
        if (release) this.out.push(release, 1); // a reordered frame was due right after this one
        this.stopped = true;
        this.ctx.sever((rule as Rule).mode, this.out);
        return;
      case 'reset':
        this.stopped = true;
        this.ctx.sever('rst');
        return;
      case 'slice': {
        // Separate writes, spaced by delayMs, so the peer reads the frame in pieces.
        const { sliceBytes, delayMs } = rule as Rule;
        const now = delayMs > 0 ? this.ctx.now() : 0;
        for (let at = 0, i = 0; at < wire.length; at += sliceBytes, i++) {
          const last = at + sliceBytes >= wire.length;
          this.out.push(wire.subarray(at, at + sliceBytes), last ? 1 : 0, now + i * delayMs);
        }
        this.ctx.onFrame?.(this.way, frame, body.length);
        break;
      }
    }
    if (release) this.out.push(release, 1);
  }

  /** The source ended: a reordered frame still held had no frame after it, and goes out now. */
  protected releaseHeld(): void {
    const release = this.held;
    this.held = undefined;
    if (release) this.out.push(release, 1);
  }

  /**
   * A frame the source cut short by ending its stream is not a whole frame,
   * so no fault applies to it: what arrived of it goes on once, as it came,
   * and it is counted as cut short, not as a frame. Only a `drop` still keeps
   * it back (counted as a drop, as asked).
   */
  protected cutShort(cut: CutShort): void {
    const { frame, rule, wire } = cut;
    const dropped = rule !== undefined && rule.action === 'drop' && rule.hold === undefined;
    if (dropped) this.ctx.faulted(this.way, frame, 'drop');
    else if (wire) this.out.push(wire, 0);
    this.ctx.cutShort(this.way, cut);
  }

  protected pass(data: Buffer, frame: number, length: number): void {
    this.out.push(data, 1);
    this.ctx.onFrame?.(this.way, frame, length);
  }

  /**
   * Flip `rule.bits` distinct body bits at positions drawn from the seed; the
   * header stays intact, and no flip makes a byte that would end the frame.
   */
  #corrupt(target: Target, rule: Rule): Buffer {
    const { wire, body, span } = target;
    const bodyBits = body.length * 8;
    if (bodyBits === 0) return wire;
    const copy = Buffer.from(span ? wire : body);
    const base = span ? span[0] : 0;
    const flips = Math.min(rule.bits, bodyBits);
    const seen = new Set<number>();
    const { reserved, readsAs } = this;
    // A body of nothing but bytes one flip away from a reserved one cannot take every flip: give up after a while.
    for (let i = 0; seen.size < flips && i < 64 * flips + 1024; i++) {
      const bit = Math.floor(
        draw(this.ctx.seed, rule.index, this.ctx.connection, target.frame, i) * bodyBits,
      );
      if (seen.has(bit)) continue;
      const at = base + (bit >> 3);
      const before = copy[at] as number;
      const flipped = before ^ (1 << (bit & 7));
      if (reserved?.has(flipped)) continue;
      copy[at] = flipped;
      // A custom frame is rebuilt by encode(): a flip that makes it read as something else is undone.
      if (!span && readsAs && !readsAs(this.encode(copy), copy)) {
        copy[at] = before;
        continue;
      }
      seen.add(bit);
    }
    return span ? copy : this.encode(copy);
  }
}

/** `truncate` / `sever-mid-frame`: the body bytes kept (half by default). */
function kept(rule: Rule, length: number): number {
  return Math.min(rule.keepBytes ?? Math.floor(length / 2), length);
}

import type { FaultAction, Way, WayCount } from '../internal/wire/frames.js';

// Plain data the on-disk protocol shares (src/internal/wire/frames.ts).
export type { WayCount } from '../internal/wire/frames.js';

/** @internal What a tally holds, as plain data. */
export interface TallySnapshot {
  c2s: WayCount;
  s2c: WayCount;
  faults: Partial<Record<FaultAction, number>>;
  cutShort: Record<Way, number>;
}

/**
 * @internal Frames and bytes forwarded per direction, and faults applied by kind.
 * A connection's tally also adds into the proxy's, so totals need no sum.
 */
export class Tally {
  readonly c2s: WayCount = { frames: 0, bytes: 0 };
  readonly s2c: WayCount = { frames: 0, bytes: 0 };
  readonly faults: Partial<Record<FaultAction, number>> = {};
  /** Frames the source cut short by ending its stream, per direction (at most one per connection and direction). */
  readonly cutShort: Record<Way, number> = { c2s: 0, s2c: 0 };
  #onChange: (() => void) | undefined;

  constructor(
    private readonly parent?: Tally,
    onChange?: () => void,
  ) {
    this.#onChange = onChange;
  }

  forwarded(way: Way, frames: number, bytes: number): void {
    const count = this[way];
    count.frames += frames;
    count.bytes += bytes;
    if (this.parent) this.parent.forwarded(way, frames, bytes);
    else if (frames > 0) this.#onChange?.();
  }

  fault(action: FaultAction): void {
    this.faults[action] = (this.faults[action] ?? 0) + 1;
    this.parent?.fault(action);
  }

  /** The source ended its stream in the middle of a frame. */
  cut(way: Way): void {
    this.cutShort[way] += 1;
    this.parent?.cut(way);
  }

  snapshot(): TallySnapshot {
    return {
      c2s: { ...this.c2s },
      s2c: { ...this.s2c },
      faults: { ...this.faults },
      cutShort: { ...this.cutShort },
    };
  }
}

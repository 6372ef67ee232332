import type { FaultAction, Way, WayCount } from '../internal/wire/frames.js';

// Plain data the on-disk protocol shares (src/internal/wire/frames.ts).
export type { WayCount } from '../internal/wire/frames.js';

/**
 * @internal Frames and bytes forwarded per direction, and faults applied by kind.
 * A connection's tally also adds into the proxy's, so totals need no sum.
 */
export class Tally {
  readonly c2s: WayCount = { frames: 0, bytes: 0 };
  readonly s2c: WayCount = { frames: 0, bytes: 0 };
  readonly faults: Partial<Record<FaultAction, number>> = {};
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

  snapshot(): { c2s: WayCount; s2c: WayCount; faults: Partial<Record<FaultAction, number>> } {
    return { c2s: { ...this.c2s }, s2c: { ...this.s2c }, faults: { ...this.faults } };
  }
}

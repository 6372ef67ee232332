import { describeValue } from '../internal/describe.js';
import { InvalidOptionError } from '../internal/errors.js';
import type { FaultRule, Way } from '../internal/wire/frames.js';
import { isObject, type ParsedRule, parseRule, unknownKeys } from '../internal/wire/rules.js';
import type { FrameHold } from './hold.js';

// The rule vocabulary is plain data the on-disk protocol shares (src/internal/wire/frames.ts).
export type {
  Direction,
  FaultAction,
  FaultRule,
  FrameSelector,
  SeedFaultPlan,
  Way,
} from '../internal/wire/frames.js';
// So is checking a rule (src/internal/wire/rules.ts); this module runs them.

/** @internal A validated rule with its defaults filled in, as the proxy runs it. */
export interface Rule extends ParsedRule {
  /** Set on the rules of `proxy.hold()`: the frame waits for this hold's release. */
  hold?: FrameHold;
}

/** Which frames `proxy.hold()` catches: a fault rule's selectors, without an action. */
export type HoldRule = Pick<FaultRule, 'direction' | 'connection' | 'frame'>;

/** @internal The rule of `proxy.hold(selector)`. */
export function parseHoldRule(selector: unknown, hold: FrameHold, where: string): Rule {
  if (selector !== undefined && !isObject(selector)) {
    throw new InvalidOptionError(
      `Expected the rule passed to ${where} to be { direction?, connection?, frame? }, got ${describeValue(selector)}.`,
    );
  }
  unknownKeys(selector ?? {}, ['direction', 'connection', 'frame'], where);
  return { ...parseRule({ ...selector, action: 'drop' }, 0, where), hold };
}

/**
 * @internal The first rule that hits this frame, or undefined. A probability draw is a
 * pure function of (seed, rule, connection, direction, frame) (or of seed,
 * rule and connection for `per: 'connection'`), so the same
 * seed and traffic give the same faults however the two directions interleave.
 */
export function matchRule(
  rules: readonly Rule[],
  way: Way,
  connection: number,
  frame: number,
  seed: number,
): Rule | undefined {
  for (const rule of rules) {
    if (!rule.ways.has(way)) continue;
    if (rule.connection !== undefined && rule.connection !== connection) continue;
    if (!rule.matchesFrame(frame)) continue;
    if (rule.probability < 1) {
      // Per connection: one draw for the connection (both ways); per frame: one for each frame.
      const chance = rule.perConnection
        ? draw(seed, rule.index, connection, 2)
        : draw(seed, rule.index, connection, way === 'c2s' ? 0 : 1, frame);
      if (chance >= rule.probability) continue;
    }
    return rule;
  }
  return undefined;
}

/** @internal A uniform number in [0, 1) from a hash of the inputs (deterministic). */
export function draw(...inputs: number[]): number {
  let h = 0x9e3779b9;
  for (const input of inputs) {
    h = Math.imul(h ^ (input >>> 0), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
    // Fold in the high part of large numbers too.
    h = Math.imul(h ^ Math.floor(input / 4294967296), 0x27d4eb2f);
    h ^= h >>> 15;
  }
  return (h >>> 0) / 4294967296;
}

/** @internal Whether any rule could hit this connection in this direction (skips matching on the fast path). */
export function mayHit(rules: readonly Rule[], way: Way, connection: number): boolean {
  return rules.some(
    (r) => r.ways.has(way) && (r.connection === undefined || r.connection === connection),
  );
}

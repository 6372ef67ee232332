import { describeValue, nearest, oneOf } from '../internal/describe.js';
import { InvalidOptionError } from '../internal/errors.js';
import type { Direction, FaultAction, FaultRule, Way } from '../internal/wire/frames.js';
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

/** @internal */
export const ACTIONS: readonly FaultAction[] = [
  'drop',
  'duplicate',
  'delay',
  'corrupt',
  'truncate',
  'reorder',
  'sever-mid-frame',
  'sever-after',
  'reset',
  'slice',
];
const DIRECTIONS: readonly Direction[] = ['c2s', 's2c', 'both'];
const RULE_KEYS = [
  'action',
  'direction',
  'connection',
  'frame',
  'probability',
  'per',
  'delayMs',
  'bits',
  'keepBytes',
  'sliceBytes',
  'mode',
];
const PLAN_KEYS = ['direction', 'drop_frame', 'sever_mid_frame', 'delay', 'duplicate_frame'];

/** @internal A validated rule with its defaults filled in. */
export interface Rule {
  index: number;
  action: FaultAction;
  ways: ReadonlySet<Way>;
  connection: number | undefined;
  matchesFrame: (frame: number) => boolean;
  probability: number;
  perConnection: boolean;
  delayMs: number;
  bits: number;
  keepBytes: number | undefined;
  sliceBytes: number;
  mode: 'fin' | 'rst';
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

/** @internal Validate rules or a seed plan, naming the option, the value and the accepted set. */
export function parseFaults(faults: unknown, where = 'faults'): Rule[] {
  if (faults === undefined) return [];
  if (Array.isArray(faults)) return faults.map((rule, i) => parseRule(rule, i, `${where}[${i}]`));
  if (isObject(faults) && 'direction' in faults && !('action' in faults)) {
    return fromSeedPlan(faults, where).map((rule, i) => parseRule(rule, i, where));
  }
  if (isObject(faults) && 'action' in faults) return [parseRule(faults, 0, where)];
  throw new InvalidOptionError(
    `Expected the \`${where}\` option to be an array of fault rules ({ action, direction, frame, … }) or a seed plan ({ direction, drop_frame, … }), got ${describeValue(faults)}.`,
  );
}

function parseRule(value: unknown, index: number, where: string): Rule {
  if (!isObject(value)) {
    throw new InvalidOptionError(
      `Expected \`${where}\` to be a fault rule object, got ${describeValue(value)}.`,
    );
  }
  unknownKeys(value, RULE_KEYS, where);
  const bad = (key: string, expected: string) =>
    new InvalidOptionError(
      `Expected the \`${key}\` option of \`${where}\` to be ${expected}, got ${describeValue(value[key])}.`,
    );
  const action = value.action as FaultAction;
  if (!ACTIONS.includes(action)) throw bad('action', oneOf(ACTIONS));
  const direction = (value.direction ?? 'both') as Direction;
  if (!DIRECTIONS.includes(direction)) throw bad('direction', oneOf(DIRECTIONS));
  const connection = value.connection;
  if (connection !== undefined && !isPositiveInt(connection))
    throw bad('connection', 'a connection number >= 1');
  const probability = value.probability ?? 1;
  if (typeof probability !== 'number' || !(probability >= 0 && probability <= 1)) {
    throw bad('probability', 'a number from 0 to 1');
  }
  const per = value.per ?? 'frame';
  if (per !== 'frame' && per !== 'connection') throw bad('per', oneOf(['frame', 'connection']));
  const delayMs = value.delayMs ?? (action === 'slice' ? 1 : 0);
  if (action === 'delay' && value.delayMs === undefined)
    throw bad('delayMs', 'a number of milliseconds >= 0 (required by "delay")');
  if (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0) {
    throw bad('delayMs', 'a number of milliseconds >= 0');
  }
  const bits = value.bits ?? 1;
  if (!isPositiveInt(bits)) throw bad('bits', 'an integer >= 1');
  const keepBytes = value.keepBytes;
  if (keepBytes !== undefined && !(Number.isInteger(keepBytes) && (keepBytes as number) >= 0)) {
    throw bad('keepBytes', 'an integer >= 0');
  }
  const sliceBytes = value.sliceBytes ?? 1;
  if (!isPositiveInt(sliceBytes)) throw bad('sliceBytes', 'an integer >= 1');
  const mode = value.mode ?? 'fin';
  if (mode !== 'fin' && mode !== 'rst') throw bad('mode', oneOf(['fin', 'rst']));
  return {
    index,
    action,
    ways: new Set<Way>(direction === 'both' ? ['c2s', 's2c'] : [direction]),
    connection: connection as number | undefined,
    matchesFrame: frameMatcher(value.frame, where),
    probability,
    perConnection: per === 'connection',
    delayMs,
    bits: bits as number,
    keepBytes: keepBytes as number | undefined,
    sliceBytes: sliceBytes as number,
    mode,
  };
}

function frameMatcher(frame: unknown, where: string): (n: number) => boolean {
  const expected = 'a frame number >= 1, { every: k } or { from, to } (1-based)';
  const fail = () =>
    new InvalidOptionError(
      `Expected the \`frame\` option of \`${where}\` to be ${expected}, got ${describeValue(frame)}.`,
    );
  if (frame === undefined) return () => true;
  if (isPositiveInt(frame)) return (n) => n === frame;
  if (isObject(frame) && 'every' in frame) {
    if (!isPositiveInt(frame.every) || Object.keys(frame).length !== 1) throw fail();
    const k = frame.every as number;
    return (n) => n % k === 0;
  }
  if (isObject(frame) && 'from' in frame) {
    const { from, to } = frame;
    if (
      !isPositiveInt(from) ||
      (to !== undefined && !(isPositiveInt(to) && (to as number) >= (from as number)))
    ) {
      throw fail();
    }
    if (Object.keys(frame).some((k) => k !== 'from' && k !== 'to')) throw fail();
    const last = (to as number | undefined) ?? Number.POSITIVE_INFINITY;
    return (n) => n >= (from as number) && n <= last;
  }
  throw fail();
}

function fromSeedPlan(plan: Record<string, unknown>, where: string): FaultRule[] {
  unknownKeys(plan, PLAN_KEYS, where);
  const direction = plan.direction as Direction;
  if (!DIRECTIONS.includes(direction)) {
    throw new InvalidOptionError(
      `Expected the \`direction\` option of \`${where}\` to be ${oneOf(DIRECTIONS)}, got ${describeValue(direction)}.`,
    );
  }
  const rules: FaultRule[] = [];
  const frameOf = (key: string) => {
    const v = plan[key];
    if (!isPositiveInt(v)) {
      throw new InvalidOptionError(
        `Expected the \`${key}\` option of \`${where}\` to be a frame number >= 1, got ${describeValue(v)}.`,
      );
    }
    return v as number;
  };
  if (plan.drop_frame !== undefined)
    rules.push({ action: 'drop', direction, frame: frameOf('drop_frame') });
  if (plan.duplicate_frame !== undefined) {
    rules.push({ action: 'duplicate', direction, frame: frameOf('duplicate_frame') });
  }
  if (plan.sever_mid_frame !== undefined) {
    rules.push({ action: 'sever-mid-frame', direction, frame: frameOf('sever_mid_frame') });
  }
  if (plan.delay !== undefined)
    rules.push({
      action: 'delay',
      direction,
      delayMs: parseDuration(plan.delay, `${where}.delay`),
    });
  return rules; // a plan with a direction and no fault forwards everything
}

/** @internal `50`, `"50ms"`, `"1.5s"` → milliseconds. */
export function parseDuration(value: unknown, where: string): number {
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value;
  const match = typeof value === 'string' ? /^(\d+(?:\.\d+)?)(ms|s)?$/.exec(value.trim()) : null;
  if (match) return Number(match[1]) * (match[2] === 's' ? 1000 : 1);
  throw new InvalidOptionError(
    `Expected \`${where}\` to be a duration such as 50, "50ms" or "1.5s", got ${describeValue(value)}.`,
  );
}

function unknownKeys(value: Record<string, unknown>, keys: readonly string[], where: string): void {
  for (const key of Object.keys(value)) {
    if (!keys.includes(key)) {
      const guess = nearest(key, keys);
      throw new InvalidOptionError(
        `Unknown key \`${key}\` in \`${where}\`.${guess ? ` Did you mean \`${guess}\`?` : ''} Valid keys: ${keys.join(', ')}.`,
      );
    }
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isPositiveInt(value: unknown): boolean {
  return Number.isInteger(value) && (value as number) >= 1;
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

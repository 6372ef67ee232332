import { describeValue, nearest, oneOf } from '../describe.js';
import { InvalidOptionError } from '../errors.js';
import type { Direction, FaultAction, FaultRule, Way } from './frames.js';

// Fault rules checked, with their defaults filled in: what both the frame
// proxy (src/proxy/faults.ts, which runs them) and a mock's faulted
// passthrough (which checks them when the response is enqueued) need, so
// neither imports the other.

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

/** @internal A validated rule with its defaults filled in (the proxy's `Rule` adds a hold). */
export interface ParsedRule {
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
}

/** @internal Validate rules or a seed plan, naming the option, the value and the accepted set. */
export function parseFaults(faults: unknown, where = 'faults'): ParsedRule[] {
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

/** @internal One rule, checked; `where` names it in messages (e.g. `faults[2]`). */
export function parseRule(value: unknown, index: number, where: string): ParsedRule {
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

/** @internal Throws for a key not in `keys`, suggesting the nearest one. */
export function unknownKeys(
  value: Record<string, unknown>,
  keys: readonly string[],
  where: string,
): void {
  for (const key of Object.keys(value)) {
    if (!keys.includes(key)) {
      const guess = nearest(key, keys);
      throw new InvalidOptionError(
        `Unknown key \`${key}\` in \`${where}\`.${guess ? ` Did you mean \`${guess}\`?` : ''} Valid keys: ${keys.join(', ')}.`,
      );
    }
  }
}

/** @internal A plain object: not null, not an array. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isPositiveInt(value: unknown): boolean {
  return Number.isInteger(value) && (value as number) >= 1;
}

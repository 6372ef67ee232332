import { describeValue } from '../internal/describe.js';
import { InvalidOptionError } from '../internal/errors.js';

/**
 * What the sanitizer does with what a test left behind (requirement
 * LK-06): `fail` the test (its name in the message), `warn` (the block is
 * printed, the test passes) or `off` (that category is not even looked
 * at). Whatever the mode, what was found is cleaned after the report.
 */
export type LeakMode = 'fail' | 'warn' | 'off';

/** The kinds of things a test can leave behind. */
export type LeakCategory = 'processes' | 'objects' | 'fds' | 'files';

export const LEAK_CATEGORIES: readonly LeakCategory[] = ['processes', 'objects', 'fds', 'files'];

/**
 * One allow-list entry: a process by its command line (`argv`), a shimkit
 * object by its kind and name (`object`, e.g. `'mock server'` or
 * `'sandbox /tmp/…'`), a descriptor (`fd`, e.g. `'socket'`) or a file
 * (`file`, its path in the test's temp dir). A string matches what starts
 * with it, a RegExp what it finds a match in. At most `count` things
 * (default 1) are allowed by it; more are reported. Say why in `reason`.
 */
export interface LeakAllow {
  argv?: string | RegExp;
  object?: string | RegExp;
  fd?: string | RegExp;
  file?: string | RegExp;
  /** How many things it allows at most. @default 1 */
  count?: number;
  /** Why this is not a leak: kept in the JSON report. */
  reason: string;
}

/**
 * A mode for everything, or per category with a default `mode`, plus an
 * allow-list.
 * @example sanitize.configure({ mode: 'fail', fds: 'warn', allow: [{ argv: 'ssh-agent', reason: 'started once per file on purpose' }] })
 */
export type LeakPolicy =
  | LeakMode
  | ({ mode?: LeakMode; allow?: readonly LeakAllow[] } & Partial<Record<LeakCategory, LeakMode>>);

/** A policy with every category's mode decided. */
export interface ResolvedPolicy {
  modes: Record<LeakCategory, LeakMode>;
  allow: readonly LeakAllow[];
}

const MODES: readonly LeakMode[] = ['fail', 'warn', 'off'];
const ALLOW_KEYS = ['argv', 'object', 'fd', 'file'] as const;

/** The default mode: `fail` under `CI=true` (or any CI value but `false`/`0`), `warn` elsewhere. */
export function defaultLeakMode(env: NodeJS.ProcessEnv = process.env): LeakMode {
  const fromEnv = env.SHIMKIT_LEAKS;
  if (fromEnv !== undefined && (MODES as readonly string[]).includes(fromEnv)) {
    return fromEnv as LeakMode;
  }
  const ci = env.CI;
  return ci !== undefined && ci !== '' && ci !== 'false' && ci !== '0' ? 'fail' : 'warn';
}

/** `policy` layered over `base` (a per-test policy over the configured one); validated. */
export function resolvePolicy(
  policy: LeakPolicy | undefined,
  base: ResolvedPolicy,
  where: string,
): ResolvedPolicy {
  if (policy === undefined) return base;
  if (typeof policy === 'string') {
    checkMode(policy, where, 'the policy');
    return { modes: modesOf(policy), allow: base.allow };
  }
  if (typeof policy !== 'object' || policy === null || Array.isArray(policy)) {
    throw new InvalidOptionError(
      `Expected the leak policy of ${where} to be 'fail', 'warn', 'off' or an object like { mode: 'fail', fds: 'warn', allow: [...] }, got ${describeValue(policy)}.`,
    );
  }
  for (const key of Object.keys(policy)) {
    if (
      key !== 'mode' &&
      key !== 'allow' &&
      !(LEAK_CATEGORIES as readonly string[]).includes(key)
    ) {
      throw new InvalidOptionError(
        `Unknown key \`${key}\` in the leak policy of ${where}: expected mode, allow, ${LEAK_CATEGORIES.join(', ')}.`,
      );
    }
  }
  const modes = policy.mode === undefined ? { ...base.modes } : modesOf(policy.mode);
  if (policy.mode !== undefined) checkMode(policy.mode, where, '`mode`');
  for (const category of LEAK_CATEGORIES) {
    const mode = policy[category];
    if (mode === undefined) continue;
    checkMode(mode, where, `\`${category}\``);
    modes[category] = mode;
  }
  const allow = policy.allow === undefined ? [] : checkAllow(policy.allow, where);
  return { modes, allow: [...base.allow, ...allow] };
}

function modesOf(mode: LeakMode): Record<LeakCategory, LeakMode> {
  return { processes: mode, objects: mode, fds: mode, files: mode };
}

function checkMode(mode: unknown, where: string, what: string): asserts mode is LeakMode {
  if (!(MODES as readonly unknown[]).includes(mode)) {
    throw new InvalidOptionError(
      `Expected ${what} in the leak policy of ${where} to be 'fail', 'warn' or 'off', got ${describeValue(mode)}.`,
    );
  }
}

function checkAllow(allow: unknown, where: string): LeakAllow[] {
  if (!Array.isArray(allow)) {
    throw new InvalidOptionError(
      `Expected \`allow\` in the leak policy of ${where} to be an array of { argv | object | fd | file, count?, reason }, got ${describeValue(allow)}.`,
    );
  }
  return allow.map((entry: unknown, i) => {
    const e = entry as Partial<LeakAllow> | null;
    const keys = ALLOW_KEYS.filter((k) => e?.[k] !== undefined);
    const bad = (why: string) =>
      new InvalidOptionError(
        `allow[${i}] in the leak policy of ${where} ${why}, got ${describeValue(entry)}. Example: { argv: 'ssh-agent', count: 1, reason: 'started once on purpose' }.`,
      );
    if (typeof e !== 'object' || e === null) throw bad('must be an object');
    if (keys.length !== 1) throw bad('must name exactly one of argv, object, fd, file');
    const pattern = e[keys[0] as (typeof ALLOW_KEYS)[number]];
    if (typeof pattern !== 'string' && !(pattern instanceof RegExp)) {
      throw bad(`needs \`${keys[0]}\` to be a string or a RegExp`);
    }
    if (typeof e.reason !== 'string' || e.reason.trim() === '') {
      throw bad('needs a `reason`: say why this is not a leak');
    }
    if (e.count !== undefined && (!Number.isInteger(e.count) || e.count < 1)) {
      throw bad('needs `count` to be a whole number of at least 1');
    }
    return e as LeakAllow;
  });
}

/** Takes allow-list entries as things are matched, each at most `count` times. */
export class AllowList {
  readonly #left: Map<LeakAllow, number>;

  constructor(allow: readonly LeakAllow[]) {
    this.#left = new Map(allow.map((a) => [a, a.count ?? 1]));
  }

  /** The entry that allows `text` (of the kind `key`), taking one of its count; undefined if none does. */
  take(key: (typeof ALLOW_KEYS)[number], text: string): LeakAllow | undefined {
    for (const [entry, left] of this.#left) {
      const pattern = entry[key];
      if (pattern === undefined || left === 0) continue;
      if (typeof pattern !== 'string') pattern.lastIndex = 0;
      const hit = typeof pattern === 'string' ? text.startsWith(pattern) : pattern.test(text);
      if (hit) {
        this.#left.set(entry, left - 1);
        return entry;
      }
    }
    return undefined;
  }
}

import { existsSync } from 'node:fs';
import { ProtocolError } from './errors.js';
import { callPath, queuePath, slotPath } from './layout.js';
import { completeLines } from './lines.js';
import { closeness, describeMatch, fits, mismatch, type RoutedCall } from './route.js';
import { firstFree } from './search.js';
import type { ResponseSource, WireConfig, WireMatch } from './types.js';

/**
 * The claim of a routed generation (requirement MB-13), once any response
 * in it has a `match` or `times` (the writer then creates `<gen>/routed`
 * before appending it). A call walks the queue in order and, for each
 * response whose `match` fits it, tries that response's free slots — slot 1
 * is `claims/<n>`, slot k is `claims/<n>-<k>` — by hard-linking its record,
 * as in the plain claim: `link(2)` lets at most one call have a slot, so
 * each response answers at most `times` calls, whatever the timing. A
 * `times: 'always'` response is used without a slot.
 *
 * Lines without `"match"` or `"times"` in their text fit any call once and
 * are not parsed; a fitting line cannot be written without one of the two.
 */

export interface Route {
  match?: WireMatch;
  times?: number | 'always';
}

export interface RoutedDecision {
  source: ResponseSource;
  response?: number;
}

/** Claim the first free slot of the first response that fits `call`. */
export function claimRouted(
  genDir: string,
  seq: number,
  queueText: string,
  call: RoutedCall,
  config: WireConfig,
  link: (existing: string, target: string) => boolean,
): RoutedDecision {
  const lines = completeLines(queueText);
  const first = call.argv.length > 0 ? JSON.stringify(call.argv[0]) : undefined;
  let lastFit: number | undefined;
  for (let n = 1; n <= lines.length; n++) {
    const line = lines[n - 1] as string;
    if (firstArgRules(line, first)) continue;
    const route = routeOf(line, n, genDir);
    if (!fits(route.match, call)) continue;
    lastFit = n;
    if (route.times === 'always') return { source: 'queue', response: n };
    const slots = route.times ?? 1;
    const taken = (k: number) => existsSync(slotPath(genDir, n, k));
    for (let k = firstFree(taken, slots); k <= slots; k++) {
      if (link(callPath(genDir, seq), slotPath(genDir, n, k)))
        return { source: 'queue', response: n };
    }
  }
  if (config.spy) return { source: 'passthrough' };
  if (typeof config.onExhausted === 'object') return { source: 'fallback' };
  // Repeating is for a response that fitted and is used up; a call nothing fits is unmatched.
  if (lastFit !== undefined && config.onExhausted === 'repeat') {
    return { source: 'repeat', response: lastFit };
  }
  return { source: 'none' };
}

const ARGS_AT = '{"match":{"args":[';
const PREFIX_AT = '{"match":{"argsPrefix":[';

/**
 * Whether line text alone rules the call out, without parsing it: the
 * writer puts `match` first and `args`/`argsPrefix` first in it, so a line
 * whose first expected argument is a string starts `{"match":{"args":["…"`,
 * and that string, JSON-encoded as `first` is, must be the call's first
 * argument. A call passes most routed lines on its way to its own, and
 * parsing each would cost it more than the rest of the claim.
 */
function firstArgRules(line: string, first: string | undefined): boolean {
  const at = line.startsWith(ARGS_AT)
    ? ARGS_AT.length
    : line.startsWith(PREFIX_AT)
      ? PREFIX_AT.length
      : -1;
  if (at === -1 || line.charCodeAt(at) !== 34) return false; // not a string: parse and test it
  return first === undefined || !line.startsWith(first, at);
}

/** The routing fields of queue line `n`, parsing only lines that have any. */
export function routeOf(line: string, n: number, genDir: string): Route {
  if (!line.includes('"match"') && !line.includes('"times"')) return {};
  let value: { match?: unknown; times?: unknown };
  try {
    value = JSON.parse(line);
  } catch (cause) {
    throw new ProtocolError(`queue line ${n} is not valid JSON`, queuePath(genDir), { cause });
  }
  const match = value?.match;
  if (
    match !== undefined &&
    (typeof match !== 'object' || match === null || Array.isArray(match))
  ) {
    throw new ProtocolError(
      `queue line ${n} has a \`match\` that is not an object`,
      queuePath(genDir),
    );
  }
  return { match: match as WireMatch | undefined, times: value?.times as Route['times'] };
}

/**
 * For the diagnostic of a call nothing fitted: the closest response and why
 * it did not fit, e.g. `the closest is #2 (args ["push", any()]): arg 1:
 * expected "push", got "pull"`.
 */
export function closestMiss(queueText: string, call: RoutedCall, genDir: string): string {
  const lines = completeLines(queueText);
  let best: { n: number; score: number; match: WireMatch } | undefined;
  const fitting: number[] = [];
  for (let n = 1; n <= lines.length; n++) {
    const { match } = routeOf(lines[n - 1] as string, n, genDir);
    if (fits(match, call)) fitting.push(n);
    else if (match !== undefined) {
      const score = closeness(match, call);
      if (!best || score > best.score) best = { n, score, match };
    }
  }
  if (fitting.length > 0) {
    const which = fitting.map((n) => `#${n}`).join(', ');
    return `every response that fits it is used up (${which}) and onExhausted is "fail"`;
  }
  if (!best) return 'no responses were queued';
  return `no response fits it; the closest is #${best.n} (${describeMatch(best.match)}): ${mismatch(best.match, call)}`;
}

import { type Route, routeOf } from './route-claim.js';
import { shellReads } from './sh-names.js';
import type { WireArg, WireMatch } from './types.js';

/**
 * Routed generations as the POSIX shim serves them (requirement PERF-09; the
 * shell's side is `shimkit_routes` and `shimkit_walk` in shims/posix-fast.sh).
 * The writer renders each response's `match` and `times` as one line of sh
 * into the route chunks `sh/r<c>` (responses 64c-63 … 64c, one line each, in
 * queue order; a last line `:` makes sourcing a whole chunk succeed). The
 * shell sources them with the call's argv as "$@", and each line whose
 * tests pass appends `<n>/<times>` to `shimkit_fits`:
 *
 *   [ $# -eq 2 ] && [ "x${1}" = 'xpush' ] && shimkit_fits="${shimkit_fits}3/2 "
 *   [ "${CI+x}${CI-}" = 'x1' ] && shimkit_fits="${shimkit_fits}4/a "     (a: always)
 *   [ $# -ge 1 ] && [ "x${1}" = 'xlog' ] && shimkit_fits="${shimkit_fits}5/? "
 *
 * `?` stands for "the shell cannot tell" (a RegExp, a literal it cannot
 * compare): if the walk reaches it before a free fitting response, the call
 * goes to the runner. Literal parts still rule a call out, so a RegExp route
 * for `log` costs nothing to a call of `status`. The shell compares bytes
 * (`[ "x$1" = 'x…' ]` is strcmp in dash, bash and busybox); the runner
 * compares what Node decoded as UTF-8, which agree for every literal that is
 * valid UTF-8 text without U+FFFD (an argument that is not valid UTF-8
 * decodes to one with U+FFFD, which no such literal equals).
 */

/** Responses per route chunk `sh/r<c>`. */
export const ROUTE_CHUNK = 64;
/**
 * A routed generation with more responses than this is the runner's: the
 * shell would parse every line for each call (about 3 µs a line in dash,
 * 7 in bash), and past this a call costs a tenth of Node's start.
 */
export const SH_ROUTE_LIMIT = 1000;

/** The chunk holding response `n`. */
export const chunkOf = (n: number) => Math.ceil(n / ROUTE_CHUNK);

/** Response `n`'s line in its route chunk (no newline). */
export function routeEntry(n: number, route: Route): string {
  const { match, times } = route;
  const tests: string[] = [];
  let known = timesWord(times) !== undefined;
  if (match !== undefined) {
    const parts = matchTests(match);
    tests.push(...parts.tests);
    known &&= parts.known;
  }
  const add = `shimkit_fits="\${shimkit_fits}${n}/${known ? timesWord(times) : '?'} "`;
  return [...tests, add].join(' && ');
}

/** The route line of queue line `n` (a line the writer did not write: parsed as the runner parses it). */
export function routeEntryOfLine(line: string, n: number, genDir: string): string {
  try {
    return routeEntry(n, routeOf(line, n, genDir));
  } catch {
    return routeEntry(n, { times: Number.NaN }); // unreadable: the runner says so
  }
}

function timesWord(times: Route['times']): string | undefined {
  if (times === undefined) return '1';
  if (times === 'always') return 'a';
  // As the writer validates it (response-schema.ts); a hand-written line may hold anything.
  return Number.isInteger(times) && times >= 1 && times <= 1_000_000 ? String(times) : undefined;
}

/** The sh tests that rule a call out, and whether passing them means it fits. */
function matchTests(match: WireMatch): { tests: string[]; known: boolean } {
  const tests: string[] = [];
  let known = typeof match === 'object' && match !== null && !Array.isArray(match);
  if (!known) return { tests, known };
  const expected = match.args ?? match.argsPrefix;
  if (match.args !== undefined && match.argsPrefix !== undefined) known = false;
  if (Array.isArray(expected)) {
    if (match.args !== undefined) tests.push(`[ $# -eq ${expected.length} ]`);
    else if (expected.length > 0) tests.push(`[ $# -ge ${expected.length} ]`);
    expected.forEach((m, i) => {
      if (typeof m === 'string') {
        if (comparable(m)) tests.push(`[ "x\${${i + 1}}" = ${shWord(`x${m}`)} ]`);
        else known = false;
      } else if (!isAny(m)) known = false;
    });
  } else if (expected !== undefined) known = false;
  if (match.cwd !== undefined) {
    if (typeof match.cwd === 'string' && comparable(match.cwd)) {
      tests.push(`shimkit_in ${shWord(match.cwd)}`);
    } else if (!isAny(match.cwd)) known = false;
  }
  if (match.env !== undefined) {
    if (typeof match.env !== 'object' || match.env === null) return { tests, known: false };
    for (const [key, m] of Object.entries(match.env)) {
      if (!shellReads(key)) {
        known = false;
        continue;
      }
      if (m === null) tests.push(`[ -z "\${${key}+x}" ]`);
      else if (isAny(m)) tests.push(`[ -n "\${${key}+x}" ]`);
      else if (typeof m === 'string' && comparable(m)) {
        tests.push(`[ "\${${key}+x}\${${key}-}" = ${shWord(`x${m}`)} ]`);
      } else known = false;
    }
  }
  return { tests, known };
}

const isAny = (m: WireArg | null | undefined): boolean =>
  typeof m === 'object' && m !== null && (m as { any?: unknown }).any === true;

/**
 * Whether the shell compares `text` as the runner does: valid UTF-8 text
 * (no lone surrogate) without U+FFFD, and no control character but tab
 * (bash keeps \x01 and \x7f as quoting marks inside words; a newline
 * would split the response's route line in two).
 */
function comparable(text: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are the point
  if (/[\u0000-\u0008\u000a-\u001f\u007f\ufffd]/.test(text)) return false;
  return Buffer.from(text).toString() === text;
}

/** A shell word: single-quoted, each `'` as `'\''`. */
function shWord(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

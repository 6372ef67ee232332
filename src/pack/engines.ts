/**
 * Which Node versions a package's `engines.node` range admits that cannot
 * `require()` an ES module: Node loads ES modules with `require()` from
 * 20.19 and 22.12 on, so a package whose `require` entry is ESM-only works
 * on the Node the check runs on and throws `ERR_REQUIRE_ESM` on those. A
 * small reading of npm's range syntax (comparators, `^`, `~`, x-ranges,
 * hyphens, `||`), enough to tell which of these lines a range lets in.
 */

type Version = [number, number, number];

/** The Node lines without `require()` of ES modules, low to high. */
const OLD_LINES: Array<{ label: string; from: Version; to: Version }> = [
  { label: '17 and older', from: [0, 0, 0], to: [17, 999, 999] },
  { label: '18', from: [18, 0, 0], to: [18, 999, 999] },
  { label: '19', from: [19, 0, 0], to: [19, 999, 999] },
  { label: '20.0–20.18', from: [20, 0, 0], to: [20, 18, 999] },
  { label: '21', from: [21, 0, 0], to: [21, 999, 999] },
  { label: '22.0–22.11', from: [22, 0, 0], to: [22, 11, 999] },
];

const cmp = (a: Version, b: Version): number => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** `18`, `18.2`, `18.2.1`, `v18.x`, `*` → the parts given (x and * end it). */
function parts(text: string): number[] | undefined {
  const core = text.replace(/^v/, '').replace(/[-+].*$/, '');
  if (core === '' || /^[xX*]$/.test(core)) return [];
  const out: number[] = [];
  for (const p of core.split('.')) {
    if (/^[xX*]$/.test(p)) break;
    if (!/^\d+$/.test(p)) return undefined;
    out.push(Number(p));
  }
  return out.length <= 3 ? out : undefined;
}

const fill = (p: number[]): Version => [p[0] ?? 0, p[1] ?? 0, p[2] ?? 0];

/** The first version after every version a partial one stands for: `20` → 21.0.0, `20.18` → 20.19.0. */
function after(p: number[]): Version {
  if (p.length === 0) return [Number.POSITIVE_INFINITY, 0, 0];
  if (p.length === 1) return [(p[0] as number) + 1, 0, 0];
  if (p.length === 2) return [p[0] as number, (p[1] as number) + 1, 0];
  return [p[0] as number, p[1] as number, (p[2] as number) + 1];
}

type Test = (v: Version) => boolean;

function comparator(op: string, text: string): Test | undefined {
  const p = parts(text);
  if (p === undefined) return undefined;
  const lo = fill(p);
  const hi = after(p);
  switch (op) {
    case '>=':
      return (v) => cmp(v, lo) >= 0;
    case '>':
      return (v) => cmp(v, hi) >= 0;
    case '<':
      return (v) => cmp(v, lo) < 0;
    case '<=':
      return (v) => cmp(v, hi) < 0;
    case '^': {
      const [M, m] = lo;
      const top: Version =
        M > 0 || p.length < 2 ? [M + 1, 0, 0] : m > 0 || p.length < 3 ? [0, m + 1, 0] : after(p);
      return (v) => cmp(v, lo) >= 0 && cmp(v, top) < 0;
    }
    case '~': {
      const top = p.length <= 1 ? after(p) : after(p.slice(0, 2));
      return (v) => cmp(v, lo) >= 0 && cmp(v, top) < 0;
    }
    default:
      return (v) => cmp(v, lo) >= 0 && cmp(v, hi) < 0;
  }
}

/** A range as a test, with the versions it names (to probe around); undefined when it cannot be read. */
function readRange(range: string): { test: Test; named: Version[] } | undefined {
  const sets: Test[][] = [];
  const named: Version[] = [];
  for (const alternative of range.split('||')) {
    const set: Test[] = [];
    const hyphen = /^\s*(\S+)\s+-\s+(\S+)\s*$/.exec(alternative);
    const words = hyphen
      ? [`>=${hyphen[1]}`, `<=${hyphen[2]}`]
      : (alternative.replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1').match(/\S+/g) ?? []);
    for (const word of words) {
      const m = /^(>=|<=|>|<|=|\^|~>?)?(.*)$/.exec(word) as RegExpExecArray;
      const test = comparator((m[1] ?? '').replace('~>', '~'), m[2] as string);
      if (!test) return undefined;
      set.push(test);
      const p = parts(m[2] as string);
      if (p?.length) named.push(fill(p), after(p));
    }
    sets.push(set);
  }
  return { test: (v) => sets.some((set) => set.every((t) => t(v))), named };
}

/**
 * The Node lines `engines.node` admits that cannot `require()` an ES module
 * (`['18', '20.0–20.18']`); empty when it admits none, or has no range
 * (no claim) or one this cannot read.
 */
export function linesWithoutRequireEsm(range: unknown): string[] {
  if (typeof range !== 'string' || range.trim() === '') return [];
  const read = readRange(range);
  if (!read) return [];
  return OLD_LINES.filter(({ from, to }) => {
    const probes = [from, to, ...read.named.filter((v) => cmp(v, from) >= 0 && cmp(v, to) <= 0)];
    return probes.some((v) => read.test(v));
  }).map((l) => l.label);
}

/** The warning for a `require()` that passed only because this Node loads ES modules with it. */
export function requireEsmWarning(specifier: string, range: unknown): string | undefined {
  const lines = linesWithoutRequireEsm(range);
  if (lines.length === 0) return undefined;
  const named =
    lines.length === 1 ? lines[0] : `${lines.slice(0, -1).join(', ')} and ${lines.at(-1)}`;
  return `require('${specifier}') loaded an ES module, which only Node 20.19+ and 22.12+ can do, but engines.node ${JSON.stringify(range)} admits Node ${named}, where it throws ERR_REQUIRE_ESM: point the \`require\` condition at a CommonJS build, or narrow engines.node (such as "^20.19.0 || >=22.12.0")`;
}

/**
 * The entry points of a package, from its `exports` (or `main`) and the
 * files of its tarball: what `import('pkg/sub')` and `require('pkg/sub')`
 * may be asked for. Pattern subpaths (`./features/*`) are expanded against
 * the tarball's files. Pure, so every shape of `exports` is unit-tested.
 */

export interface EntryPoint {
  /** `'.'` or `'./sub'`. */
  subpath: string;
  /** What a user writes: `'pkg'` or `'pkg/sub'`. */
  specifier: string;
  /** `'json'` for a JSON file (required, not imported or type-checked), else `'js'`. */
  kind: 'js' | 'json';
}

export interface EntryPoints {
  entries: EntryPoint[];
  /** Why some were left out (a cap, a non-JavaScript subpath), or why there are none. */
  notes: string[];
}

/** Expansions of pattern subpaths beyond this many are not checked (and a note says so). */
export const MAX_ENTRIES = 200;

const JS = /\.(?:[cm]?js|node)$/;

export function entryPoints(
  name: string,
  exports: unknown,
  main: unknown,
  files: readonly string[],
): EntryPoints {
  const notes: string[] = [];
  const specifier = (subpath: string) => (subpath === '.' ? name : `${name}${subpath.slice(1)}`);
  if (exports === undefined || exports === null) {
    const hasIndex = files.some((f) => /^index\.(?:js|json|node)$/.test(f));
    if (typeof main === 'string' || hasIndex) {
      return {
        entries: [
          {
            subpath: '.',
            specifier: name,
            kind: kindOf(String(main ?? 'index.js')) === 'json' ? 'json' : 'js',
          },
        ],
        notes,
      };
    }
    notes.push('it has no `exports`, no `main` and no index.js: nothing to import');
    return { entries: [], notes };
  }
  if (typeof exports === 'string' || Array.isArray(exports) || !hasSubpathKeys(exports)) {
    return {
      entries: [
        { subpath: '.', specifier: name, kind: kindOfTargets(exports) === 'json' ? 'json' : 'js' },
      ],
      notes,
    };
  }
  const map = exports as Record<string, unknown>;
  const blocked = Object.keys(map).filter((k) => map[k] === null);
  const subpaths: Array<{ subpath: string; kind: 'js' | 'json' }> = [];
  const seen = new Set<string>();
  const add = (subpath: string, kind: 'js' | 'json') => {
    if (seen.has(subpath) || isBlocked(subpath, blocked)) return;
    seen.add(subpath);
    subpaths.push({ subpath, kind });
  };
  for (const [key, value] of Object.entries(map)) {
    if (value === null) continue;
    const kind = kindOfTargets(value, key);
    if (!key.includes('*')) {
      if (kind === 'other') notes.push(`${key} is not JavaScript or JSON: not loaded`);
      else add(key, kind);
      continue;
    }
    const expanded = expand(key, value, files);
    if (expanded.length === 0) notes.push(`${key} matches no file in the tarball: not loaded`);
    for (const subpath of expanded) {
      const k = kindOf(subpath) === 'json' ? 'json' : 'js';
      if (kind !== 'other' || JS.test(subpath)) add(subpath, k);
    }
  }
  if (subpaths.length > MAX_ENTRIES) {
    notes.push(
      `${subpaths.length - MAX_ENTRIES} more subpaths (from patterns) were not loaded: only the first ${MAX_ENTRIES} are`,
    );
  }
  return {
    entries: subpaths
      .slice(0, MAX_ENTRIES)
      .map(({ subpath, kind }) => ({ subpath, specifier: specifier(subpath), kind })),
    notes,
  };
}

/** `exports` as a map of conditions (`{ import, require }`) rather than of subpaths. */
function hasSubpathKeys(exports: unknown): boolean {
  return (
    typeof exports === 'object' &&
    exports !== null &&
    Object.keys(exports).some((k) => k.startsWith('.'))
  );
}

/** The string targets under an `exports` value, those outside a `types` condition first. */
export function targets(
  value: unknown,
  underTypes = false,
): Array<{ target: string; types: boolean }> {
  if (typeof value === 'string') return [{ target: value, types: underTypes }];
  if (Array.isArray(value)) return value.flatMap((v) => targets(v, underTypes));
  if (typeof value === 'object' && value !== null) {
    const all = Object.entries(value).flatMap(([k, v]) =>
      targets(v, underTypes || k === 'types' || k === 'typings'),
    );
    return [...all.filter((t) => !t.types), ...all.filter((t) => t.types)];
  }
  return [];
}

function kindOf(path: string): 'js' | 'json' | 'other' {
  if (path.endsWith('.json')) return 'json';
  if (JS.test(path) || !/\.[A-Za-z0-9]+$/.test(path.split('/').pop() ?? '')) return 'js';
  return /\.d\.[cm]?ts$/.test(path) ? 'js' : 'other';
}

function kindOfTargets(value: unknown, key?: string): 'js' | 'json' | 'other' {
  const code = targets(value).filter((t) => !t.types);
  if (code.length === 0) return key ? kindOf(key) : 'js';
  const kinds = code.map((t) => kindOf(t.target));
  if (kinds.includes('js')) return 'js';
  return kinds.includes('json') ? 'json' : 'other';
}

/** The subpaths a pattern key stands for: one per tarball file its targets match. */
function expand(key: string, value: unknown, files: readonly string[]): string[] {
  const all = targets(value);
  const code = all.filter((t) => !t.types);
  const out = new Set<string>();
  for (const { target } of code.length > 0 ? code : all) {
    if (!target.startsWith('./') || target.split('*').length !== 2) continue;
    const [before, after] = target.slice(2).split('*') as [string, string];
    for (const file of files) {
      if (file.length <= before.length + after.length) continue;
      if (!file.startsWith(before) || !file.endsWith(after)) continue;
      const star = file.slice(before.length, file.length - after.length);
      out.add(key.replace('*', star));
    }
  }
  return [...out].sort();
}

/** Whether a more specific `null` key (`"./internal/*": null`) hides a subpath. */
function isBlocked(subpath: string, blocked: readonly string[]): boolean {
  return blocked.some((key) => {
    if (!key.includes('*')) return key === subpath;
    const [before, after] = key.split('*') as [string, string];
    return (
      subpath.startsWith(before) &&
      subpath.endsWith(after) &&
      subpath.length > before.length + after.length - 1
    );
  });
}

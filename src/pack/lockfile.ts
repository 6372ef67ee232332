/**
 * The lockfile of the check project for an offline install: the packed
 * package from its tarball, and its runtime dependencies at the versions of
 * the package's own `package-lock.json`, so npm needs from the cache only
 * the tarballs it already has (not the package documents a range needs).
 */

/** What a package.json and a lockfile entry both say about dependencies. */
interface DependencyFields {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [key: string]: unknown;
}

interface LockEntry extends DependencyFields {
  version?: string;
  resolved?: string;
  integrity?: string;
  link?: boolean;
  dev?: boolean;
  devOptional?: boolean;
  optional?: boolean;
  peer?: boolean;
}

export interface Manifest extends DependencyFields {
  name?: string;
  version?: string;
}

/** The names an entry needs installed: its dependencies, optional ones and non-optional peers. */
function needs(entry: LockEntry | Manifest): Array<{ name: string; optional: boolean }> {
  const out: Array<{ name: string; optional: boolean }> = [];
  for (const name of Object.keys(entry.dependencies ?? {})) out.push({ name, optional: false });
  for (const name of Object.keys(entry.optionalDependencies ?? {}))
    out.push({ name, optional: true });
  for (const name of Object.keys(entry.peerDependencies ?? {})) {
    if (!entry.peerDependenciesMeta?.[name]?.optional) out.push({ name, optional: true });
  }
  return out;
}

/** Where Node would find `name` from the package at lock path `from` ('' is the root). */
function locate(
  packages: Record<string, LockEntry>,
  from: string,
  name: string,
): string | undefined {
  let dir = from;
  for (;;) {
    const key = dir === '' ? `node_modules/${name}` : `${dir}/node_modules/${name}`;
    if (packages[key]) return key;
    if (dir === '') return undefined;
    const at = dir.lastIndexOf('/node_modules/');
    dir = at === -1 ? '' : dir.slice(0, at);
  }
}

/**
 * The check project's `package-lock.json`, or `undefined` when the host
 * lock cannot give the tree (no `packages` map, a linked workspace package,
 * a required dependency it lacks): npm then resolves the ranges itself.
 */
export function checkProjectLock(
  hostLock: unknown,
  manifest: Manifest,
  projectName: string,
  tarballSpec: string,
  peers: Record<string, string> = {},
): object | undefined {
  const packages = (hostLock as { packages?: Record<string, LockEntry> } | null)?.packages;
  if (!packages || typeof packages !== 'object' || typeof manifest.name !== 'string')
    return undefined;
  const self = `node_modules/${manifest.name}`;
  const picked = new Map<string, LockEntry>();
  const queue: Array<{ from: string; entry: LockEntry | Manifest }> = [
    { from: '', entry: manifest },
    { from: '', entry: { dependencies: peers } },
  ];
  while (queue.length > 0) {
    const { from, entry } = queue.shift() as { from: string; entry: LockEntry | Manifest };
    for (const { name, optional } of needs(entry)) {
      const key = locate(packages, from, name);
      if (key === undefined || key === self) {
        if (optional) continue;
        return undefined;
      }
      if (picked.has(key)) continue;
      const found = packages[key] as LockEntry;
      if (found.link) return undefined;
      const { dev: _dev, devOptional: _devOptional, ...kept } = found;
      picked.set(key, kept);
      queue.push({ from: key, entry: found });
    }
  }
  const dependencies = { ...peers, [manifest.name]: tarballSpec };
  return {
    name: projectName,
    version: '0.0.0',
    lockfileVersion: 3,
    requires: true,
    packages: {
      '': { name: projectName, version: '0.0.0', dependencies },
      [self]: {
        version: manifest.version,
        resolved: tarballSpec,
        ...pick(manifest, [
          'dependencies',
          'optionalDependencies',
          'peerDependencies',
          'peerDependenciesMeta',
          'bin',
        ]),
      },
      ...Object.fromEntries([...picked].sort(([a], [b]) => (a < b ? -1 : 1))),
    },
  };
}

function pick(source: Manifest, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) if (source[key] !== undefined) out[key] = source[key];
  return out;
}

const NODE_MODULES = 'node_modules/';

/**
 * Give each registry package of a check-project lock its tarball URL where
 * the host lock left it out (npm omits `resolved` under
 * `omit-lockfile-registry-resolved`), and return every `integrity` it pins.
 * With both, npm reads each tarball from the cache by its digest and needs
 * neither the network nor a cached package document: the offline install
 * then needs only those content files, whatever the size of the host cache.
 * `undefined` when some package has no integrity (then the whole cache is
 * seeded).
 */
export function pinTarballs(lock: object, registry: string): string[] | undefined {
  const packages = (lock as { packages?: Record<string, LockEntry> }).packages ?? {};
  const base = registry.endsWith('/') ? registry : `${registry}/`;
  const integrities: string[] = [];
  for (const [key, entry] of Object.entries(packages)) {
    if (key === '' || (typeof entry.resolved === 'string' && entry.resolved.startsWith('file:'))) {
      continue;
    }
    if (typeof entry.integrity !== 'string' || typeof entry.version !== 'string') return undefined;
    integrities.push(entry.integrity);
    if (entry.resolved !== undefined) continue;
    // An alias's entry names the real package; else the last `node_modules/` of its path does.
    const name =
      typeof entry.name === 'string'
        ? entry.name
        : key.slice(key.lastIndexOf(NODE_MODULES) + NODE_MODULES.length);
    const file = `${name.slice(name.indexOf('/') + 1)}-${entry.version}.tgz`;
    entry.resolved = `${base}${name}/-/${file}`;
  }
  return integrities;
}

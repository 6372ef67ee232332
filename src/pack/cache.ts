import { copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Seed an empty npm cache from the host's, for an offline install that can
 * never write to the host cache. The content (`content-v2`, immutable files
 * named by their hash, which npm only ever adds to with a rename) is
 * hard-linked, or symlinked across devices, or copied where neither works.
 *
 * With `integrities` (a lockfile's: npm then reads each tarball by its
 * digest, and needs no index) only those files are linked, so the cost does
 * not grow with the host cache. Without, every content file is linked and
 * the index (`index-v5`, which npm appends to, and which it needs to
 * resolve ranges from cached package documents) is copied.
 * Returns how many content files were linked or copied.
 */
export function seedCache(
  hostCache: string,
  cache: string,
  integrities?: readonly string[],
): number {
  const from = join(hostCache, '_cacache');
  const to = join(cache, '_cacache');
  mkdirSync(to, { recursive: true });
  if (integrities) return seedContent(from, to, integrities);
  copyTree(join(from, 'index-v5'), join(to, 'index-v5'), copyFileSync);
  return copyTree(join(from, 'content-v2'), join(to, 'content-v2'), linkFile);
}

/** The content file of each SRI hash (`sha512-<base64>`, several space-separated) the host cache has. */
function seedContent(from: string, to: string, integrities: readonly string[]): number {
  let files = 0;
  for (const sri of integrities) {
    for (const hash of sri.trim().split(/\s+/)) {
      const dash = hash.indexOf('-');
      const algorithm = hash.slice(0, dash);
      if (dash <= 0 || !/^sha(1|256|384|512)$/.test(algorithm)) continue;
      const hex = Buffer.from(hash.slice(dash + 1).replace(/\?.*$/, ''), 'base64').toString('hex');
      const parts = ['content-v2', algorithm, hex.slice(0, 2), hex.slice(2, 4), hex.slice(4)];
      const source = join(from, ...parts);
      if (!existsSync(source)) continue;
      mkdirSync(join(to, ...parts.slice(0, -1)), { recursive: true });
      linkFile(source, join(to, ...parts));
      files++;
    }
  }
  return files;
}

function linkFile(source: string, target: string): void {
  try {
    linkSync(source, target);
  } catch {
    try {
      symlinkSync(source, target);
    } catch {
      copyFileSync(source, target);
    }
  }
}

/** The files under `from`, made under `to` by `make`; a missing `from` is an empty tree. */
function copyTree(
  from: string,
  to: string,
  make: (source: string, target: string) => void,
): number {
  let entries: import('node:fs').Dirent[];
  try {
    entries = readdirSync(from, { withFileTypes: true });
  } catch {
    return 0;
  }
  mkdirSync(to, { recursive: true });
  let files = 0;
  for (const entry of entries) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) files += copyTree(source, target, make);
    else if (entry.isFile()) {
      make(source, target);
      files++;
    }
  }
  return files;
}

import { copyFileSync, linkSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Seed an empty npm cache from the host's, for an offline install that can
 * never write to the host cache: the index (`index-v5`, which npm appends
 * to) is copied; the content (`content-v2`, immutable files named by their
 * hash, which npm only ever adds to with a rename) is hard-linked, or
 * symlinked across devices, or copied where neither works.
 * Returns how many content files were linked or copied.
 */
export function seedCache(hostCache: string, cache: string): number {
  const from = join(hostCache, '_cacache');
  const to = join(cache, '_cacache');
  mkdirSync(to, { recursive: true });
  copyTree(join(from, 'index-v5'), join(to, 'index-v5'), copyFileSync);
  return copyTree(join(from, 'content-v2'), join(to, 'content-v2'), linkFile);
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

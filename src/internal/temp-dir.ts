import { chmodSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { InvalidOptionError, ShimkitError } from './errors.js';
import { onProcessExit } from './exit-cleanup.js';
import { hostTmpdir } from './host-tmp.js';
import { tmpPackage } from './lazy.js';
import { kindOf, randomName, rootNameStem } from './leftovers/names.js';
import { processOwner, threadOwner } from './leftovers/owner.js';
import { recordDir } from './leftovers/registry.js';
import { markKept, sweepOnce } from './leftovers/sweep.js';
import { removeTree } from './remove-tree.js';

/** A private (0700) temp dir that is removed on `remove()` or when the process exits. */
export interface TempDir {
  readonly path: string;
  /** Delete it now (idempotent). */
  remove(): void;
  /** Keep it after exit (for debugging); neither the exit handler nor the leftover sweep removes it. */
  keep(): void;
}

/**
 * A temp root in `parent` (default `os.tmpdir()`), named after its owner:
 * `<prefix>-<pid>-<start>-<scope>-<random>` (`shimkit-sandbox-4242-981234-k3j9x2-Ab3dE9`),
 * so that a later process can sweep it if this one dies without cleaning up
 * (requirement SP-11). The first call in a process (and the first for each custom
 * parent) runs that sweep. A root outside `os.tmpdir()`, or made in a worker
 * thread, is also listed in the owner's registry.
 *
 * A `parent` that does not exist (or is not a dir) throws `InvalidOptionError`
 * naming it; a missing `os.tmpdir()` a `ShimkitError` (`ERR_SHIMKIT_NO_TEMP_DIR`).
 */
export function createTempDir(prefix: string, parent?: string): TempDir {
  sweepOnce(parent);
  const stem = rootNameStem(kindOf(prefix), processOwner());
  let path: string;
  try {
    path = tmpPackage().dirSync({
      template: `${stem}XXXXXX`,
      mode: 0o700,
      // Removed by shimkit (remove(), its exit hook, the sweep): tmp keeps no cleanup entry per dir.
      keep: true,
      ...(parent ? { tmpdir: parent } : {}),
    }).name;
  } catch (error) {
    throw missingParentError(parent, error) ?? error;
  }
  chmodSync(path, 0o700); // the umask may have taken bits from the mode: the owner must write in it
  // In os.tmpdir() or the host's (a leak sanitizer scope's TMPDIR is in the host's, named after this process): swept.
  const elsewhere =
    parent !== undefined &&
    resolve(parent) !== resolve(tmpdir()) &&
    resolve(parent) !== resolve(hostTmpdir());
  const unrecord = elsewhere || threadOwner() ? recordDir(path) : () => {};
  let removed = false;
  const forget = onProcessExit(() => removeTree(path, trashName()));
  return {
    path,
    remove() {
      if (removed) return;
      removed = true;
      forget();
      removeTree(path, trashName());
      unrecord();
    },
    keep() {
      forget();
      markKept(path);
      unrecord();
    },
  };
}

/** The error for a parent dir that is missing or not a dir; undefined when it is one (another failure). */
function missingParentError(parent: string | undefined, cause: unknown): ShimkitError | undefined {
  const dir = parent ?? tmpdir();
  let what: string;
  try {
    if (statSync(dir).isDirectory()) return undefined;
    what = 'it is not a dir';
  } catch {
    what = 'it does not exist';
  }
  if (parent !== undefined) {
    return new InvalidOptionError(
      `Cannot create a temp dir in ${dir}: ${what}. Create that dir first, or pass another existing dir as \`tmpDir\` (or leave it out to use ${tmpdir()}).`,
      { cause },
    );
  }
  return new ShimkitError(
    'ERR_SHIMKIT_NO_TEMP_DIR',
    `Cannot create a temp dir in ${dir} (the system temp dir, os.tmpdir()): ${what}. Create it, point TMPDIR at an existing dir, or pass \`tmpDir\`.`,
    { cause },
  );
}

/** A trash name that carries this process as its owner, so a delete cut short is swept later. */
function trashName(): string {
  return `${rootNameStem('trash', processOwner())}${randomName()}`;
}

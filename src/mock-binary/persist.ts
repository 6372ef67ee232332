import {
  chmodSync,
  closeSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { nearest } from '../internal/describe.js';
import { InvalidOptionError, ShimkitError } from '../internal/errors.js';
import { onProcessExit } from '../internal/exit-cleanup.js';
import {
  assertOwnDir,
  assertPrivateDir,
  type OwnerHost,
  realOwnerHost,
} from '../internal/owner.js';
import { removeTree } from '../internal/remove-tree.js';
import type { TempDir } from '../internal/temp-dir.js';
import { createTemp, linkExclusive, tryUnlink } from '../queue/atomic.js';
import { errnoCode, stateError } from '../queue/errors.js';

/**
 * Bin dirs that outlive their process (`createMockBinDir({ dir })` or
 * `{ keep: true }`) and are reopened by dir (`openMockBinDir(dir)`, what the
 * `shimkit` command does on every run). Such a root holds, beside `bin/` and
 * `state/`:
 *
 *   <root>/shimkit.json        {"kind":"shimkit-mock-bin-dir","version":1,"platform":"linux"}
 *   <root>/mocks/<name>.json   {"name":"git","state":"git.<id>","strict":false}: one per live mock
 *
 * Each appears whole and exclusively (a temp file hard-linked into place), so
 * two processes making the same dir, or the same mock in it, cannot both win.
 */

export const MARKER_FILE = 'shimkit.json';
const KIND = 'shimkit-mock-bin-dir';
const VERSION = 1;

/** What `mocks/<name>.json` holds. */
export interface MockEntry {
  name: string;
  /** The state dir's name under `<root>/state/`. */
  state: string;
  strict: boolean;
}

/** Thrown when a dir is not (or no longer) a reopenable shimkit mock dir. */
export class NotMockDirError extends ShimkitError {
  constructor(message: string) {
    super('ERR_SHIMKIT_NOT_MOCK_DIR', message);
  }
}

/** @internal A mock's entry is there, its state dir not (yet): being made, or deleted by hand. */
export class MockBeingMadeError extends NotMockDirError {}

/**
 * Take `dir` as a bin dir's root: make it (0700), or accept an existing empty
 * dir of this user's (made 0700; a link, or another user's dir, is refused:
 * requirement SEC-03). Unless `keep`, it is removed when the process exits,
 * as a temp dir is.
 */
export function claimRoot(
  dir: string,
  keep: boolean,
  where: string,
  host: OwnerHost = realOwnerHost(),
): TempDir {
  const path = resolve(dir);
  try {
    mkdirSync(path, { mode: 0o700 });
  } catch (error) {
    if (errnoCode(error) !== 'EEXIST') {
      if (errnoCode(error) === 'ENOENT') {
        throw new InvalidOptionError(
          `Cannot make the \`dir\` of ${where}, ${path}: its parent dir does not exist. Create the parent first (mkdir -p).`,
          { cause: error },
        );
      }
      throw stateError(error, path, 'test');
    }
    assertOwnDir(path, `The \`dir\` of ${where}`, { host });
    // Private first, then looked into: nobody else can put anything in it after.
    chmodSync(path, 0o700);
    refuseUsed(path, where);
  }
  let removed = false;
  const forget = keep ? () => {} : onProcessExit(() => removeTree(path));
  return {
    path,
    remove() {
      if (removed) return;
      removed = true;
      forget();
      removeTree(path);
    },
    keep() {
      forget();
    },
  };
}

/** An existing dir may become a root only if it is an empty dir. */
function refuseUsed(path: string, where: string): void {
  let entries: string[];
  try {
    if (!statSync(path).isDirectory()) {
      throw new InvalidOptionError(
        `The \`dir\` of ${where}, ${path}, exists and is not a dir. Pass a dir that does not exist yet (it is created) or an empty one.`,
      );
    }
    entries = readdirSync(path);
  } catch (error) {
    if (error instanceof ShimkitError) throw error;
    throw stateError(error, path, 'test');
  }
  if (entries.includes(MARKER_FILE)) {
    throw new InvalidOptionError(
      `${path} is a shimkit mock dir already: reopen it with openMockBinDir(${JSON.stringify(path)}) (from a shell: \`shimkit mock NAME --dir ${path}\` adds a mock to it).`,
    );
  }
  if (entries.length > 0) {
    throw new InvalidOptionError(
      `The \`dir\` of ${where}, ${path}, is not empty (${entries.slice(0, 3).join(', ')}${entries.length > 3 ? ', …' : ''}): shimkit deletes its root on dispose(), so it takes only a new or empty dir. Pass another path, such as a subdir of it.`,
    );
  }
}

/** Write `shimkit.json`: from now on the root can be reopened. */
/** @internal Another process made the dir a mock dir while this one was making it there. */
export class DirRaceError extends InvalidOptionError {}

export function writeMarker(root: string, platform: NodeJS.Platform): void {
  const text = `${JSON.stringify({ kind: KIND, version: VERSION, platform })}\n`;
  if (!writeExclusive(join(root, MARKER_FILE), text)) {
    throw new DirRaceError(
      `${root} became a shimkit mock dir while this one was being made there (another process?): reopen it with openMockBinDir().`,
    );
  }
}

/** Read and check `shimkit.json`; the platform whose shims the dir holds. */
export function readMarker(dir: string): { root: string; platform: NodeJS.Platform } {
  const root = resolve(dir);
  const file = join(root, MARKER_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      let what = 'it does not exist';
      try {
        const stat = statSync(root);
        what = !stat.isDirectory()
          ? 'it is not a dir'
          : readdirSync(root).includes('bin')
            ? `it has no ${MARKER_FILE}: it was made without \`dir\` or \`keep: true\`, so it is removed with its process`
            : `it has no ${MARKER_FILE}`;
      } catch {}
      throw new NotMockDirError(
        `${root} is not a shimkit mock dir (${what}). Make one first: \`shimkit mock NAME --dir ${root}\`, or createMockBinDir({ dir, keep: true }).`,
      );
    }
    throw stateError(error, file, 'test');
  }
  let marker: { kind?: unknown; version?: unknown; platform?: unknown };
  try {
    marker = JSON.parse(text);
  } catch {
    marker = {};
  }
  if (marker?.kind !== KIND || typeof marker.platform !== 'string') {
    throw new NotMockDirError(
      `${file} is not a shimkit mock dir marker (expected {"kind":"${KIND}",…}); was it written by something else?`,
    );
  }
  if (marker.version !== VERSION) {
    throw new NotMockDirError(
      `${root} was made by another shimkit version (mock dir version ${JSON.stringify(marker.version)}, this one reads ${VERSION}); make it again with this version.`,
    );
  }
  return { root, platform: marker.platform as NodeJS.Platform };
}

const entryDir = (root: string) => join(root, 'mocks');
const entryPath = (root: string, key: string) => join(entryDir(root), `${key}.json`);

/** Record a new mock; false if the dir has one of that name already. */
export function writeEntry(root: string, key: string, entry: MockEntry): boolean {
  try {
    mkdirSync(entryDir(root), { recursive: true, mode: 0o700 });
    return writeExclusive(entryPath(root, key), `${JSON.stringify(entry)}\n`);
  } catch (error) {
    throw stateError(error, entryPath(root, key), 'test');
  }
}

export function removeEntry(root: string, key: string): void {
  try {
    unlinkSync(entryPath(root, key));
  } catch {}
}

/** The recorded mock of `key`, or undefined. */
export function readEntry(root: string, key: string): MockEntry | undefined {
  let text: string;
  try {
    text = readFileSync(entryPath(root, key), 'utf8');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    throw stateError(error, entryPath(root, key), 'test');
  }
  try {
    const entry = JSON.parse(text) as MockEntry;
    if (typeof entry.name === 'string' && typeof entry.state === 'string') return entry;
  } catch {}
  throw new NotMockDirError(`${entryPath(root, key)} is not a mock entry shimkit wrote.`);
}

/** The keys of every recorded mock, sorted. */
export function entryKeys(root: string): string[] {
  try {
    return readdirSync(entryDir(root))
      .filter((f) => f.endsWith('.json') && f.length > '.json'.length)
      .map((f) => f.slice(0, -'.json'.length))
      .sort();
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return [];
    throw stateError(error, entryDir(root), 'test');
  }
}

/** The error for a name that is not mocked in `root`, with the nearest one that is. */
export function noSuchMock(root: string, name: string, names: readonly string[]): NotMockDirError {
  const guess = nearest(name, names);
  return new NotMockDirError(
    `${root} has no mock named ${JSON.stringify(name)}${guess ? `; did you mean ${JSON.stringify(guess)}?` : '.'} ${
      names.length > 0 ? `Mocks there: ${names.join(', ')}.` : 'It has no mocks yet.'
    } Add one with \`shimkit mock ${name} --dir ${root}\` (or bin.mock(${JSON.stringify(name)})).`,
  );
}

/** `target` appears whole with `text` (0600), unless it exists (then false). */
function writeExclusive(target: string, text: string): boolean {
  const { fd, path: temp } = createTemp(target, text);
  try {
    closeSync(fd);
    return linkExclusive(temp, target);
  } finally {
    tryUnlink(temp);
  }
}

/**
 * Before reusing a mock dir: it, its shim dir and its state dir must be real
 * dirs of this user's (SEC-03), or another user could swap a shim in them.
 */
export function assertOwnRoot(
  root: string,
  shimDir: string,
  host: OwnerHost = realOwnerHost(),
): void {
  const advice = `Do not use it: make a new one with \`shimkit mock NAME --dir <a new path>\` or createMockBinDir({ dir }).`;
  assertOwnDir(root, 'The mock dir', { advice, host });
  assertPrivateDir(root, 'The mock dir', host);
  for (const dir of [shimDir, join(root, 'state'), entryDir(root)]) {
    try {
      assertOwnDir(dir, `A dir in the mock dir ${root}`, { advice, host });
      assertPrivateDir(dir, `A dir in the mock dir ${root}`, host);
    } catch (error) {
      if (errnoCode(error) !== 'ENOENT') throw error; // one not made yet is made by this user
    }
  }
}

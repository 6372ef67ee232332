import { randomBytes } from 'node:crypto';
import type { Owner } from './owner.js';

/**
 * Names that carry their owner, so a later process can tell whether the
 * owner is gone from one `readdir`:
 *
 * ```text
 * shimkit[-<kind>]-<pid>-<start>-<scope>-<random>   a temp root (mock, sandbox, trash)
 * shimkit-owner-<pid>-<start>-<scope>               a process's registry dir
 * shimkit-owner-<pid>-<start>-<scope>-<tid>-<tstart> a worker thread's registry dir
 * ```
 *
 * `<start>` is 0 and `<scope>` is `0` where they are unknown. Names are kept
 * short: Unix socket paths under a root are limited to 103–107 bytes.
 */

const NUMBER = /^(0|[1-9][0-9]{0,15})$/;
const SCOPE = /^[0-9a-z]{1,6}$/;
const KIND = /^[a-z]{1,16}$/;
const RANDOM = /^[A-Za-z0-9]{6}$/;
const REGISTRY = 'owner';

/** What a name in a temp parent says, when it is one of shimkit's. */
export type LeftoverName =
  | { type: 'root'; kind: string; owner: Owner }
  | { type: 'registry'; owner: Owner };

/** The kind in a root's name for a `createTempDir` prefix: `'shimkit-sandbox-'` → `'sandbox'`, `'shimkit'` → `''`. */
export function kindOf(prefix: string): string {
  const kind = prefix
    .replace(/^shimkit/, '')
    .replace(/[^a-z]/gi, '')
    .toLowerCase()
    .slice(0, 16);
  return kind === REGISTRY ? 'dir' : kind;
}

function ownerFields(owner: Owner): string {
  return `${owner.pid}-${owner.start}-${owner.scope}`;
}

/** A root's name up to its random part: `shimkit-sandbox-123-456-k3j9x2-` (then 6 random characters). */
export function rootNameStem(kind: string, owner: Owner): string {
  return `shimkit-${kind === '' ? '' : `${kind}-`}${ownerFields(owner)}-`;
}

/** The name of `owner`'s registry dir. */
export function registryName(owner: Owner): string {
  const thread = owner.thread ? `-${owner.thread.tid}-${owner.thread.start}` : '';
  return `shimkit-${REGISTRY}-${ownerFields(owner)}${thread}`;
}

/** Read a name written by `rootNameStem` + 6 random characters, or by `registryName`; undefined for anything else. */
export function parseLeftoverName(name: string): LeftoverName | undefined {
  const parts = name.split('-');
  if (parts[0] !== 'shimkit') return undefined;
  if (parts[1] === REGISTRY) {
    if (parts.length !== 5 && parts.length !== 7) return undefined;
    const owner = parseOwner(parts[2], parts[3], parts[4]);
    if (!owner) return undefined;
    if (parts.length === 7) {
      const tid = parseNumber(parts[5]);
      const start = parseNumber(parts[6]);
      if (tid === undefined || tid === 0 || start === undefined) return undefined;
      owner.thread = { tid, start };
    }
    return { type: 'registry', owner };
  }
  let kind = '';
  if (parts.length === 6) {
    kind = parts[1] as string;
    if (!KIND.test(kind)) return undefined;
  } else if (parts.length !== 5) {
    return undefined;
  }
  const [pid, start, scope, random] = parts.slice(-4);
  if (!RANDOM.test(random as string)) return undefined;
  const owner = parseOwner(pid, start, scope);
  return owner && { type: 'root', kind, owner };
}

function parseOwner(
  pid: string | undefined,
  start: string | undefined,
  scope: string | undefined,
): Owner | undefined {
  const p = parseNumber(pid);
  const s = parseNumber(start);
  if (p === undefined || p === 0 || s === undefined) return undefined;
  if (scope === undefined || !SCOPE.test(scope)) return undefined;
  return { pid: p, start: s, scope };
}

function parseNumber(text: string | undefined): number | undefined {
  if (text === undefined || !NUMBER.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** 6 random name characters, as in a root's name. */
export function randomName(): string {
  return [...randomBytes(6)].map((b) => ALPHABET[b % ALPHABET.length]).join('');
}

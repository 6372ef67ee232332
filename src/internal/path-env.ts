/**
 * PATH handling that works for both platforms and can be tested on either:
 * every function takes `platform` (and an env object) as parameters.
 */
export type Env = Record<string, string | undefined>;

export function pathDelimiter(platform: NodeJS.Platform): string {
  return platform === 'win32' ? ';' : ':';
}

/**
 * The key PATH lives under. On Windows env keys are case-insensitive and the
 * existing casing (usually `Path`) must be kept; a fresh env gets `Path`.
 */
export function pathKey(env: Env, platform: NodeJS.Platform): string {
  if (platform !== 'win32') return 'PATH';
  let found: string | undefined;
  for (const key of Object.keys(env)) {
    if (key.toUpperCase() === 'PATH') {
      // Prefer the last defined key, as Windows' own lookup would see one value.
      if (env[key] !== undefined) found = key;
      else found ??= key;
    }
  }
  return found ?? 'Path';
}

/** `dir` first, then the rest of `value`. */
export function prependPathEntry(
  value: string | undefined,
  dir: string,
  platform: NodeJS.Platform,
): string {
  return value ? `${dir}${pathDelimiter(platform)}${value}` : dir;
}

/**
 * `value` without the first occurrence of `dir`, other entries untouched and
 * in order. Returns `undefined` when nothing is left.
 */
export function removePathEntry(
  value: string | undefined,
  dir: string,
  platform: NodeJS.Platform,
): string | undefined {
  if (value === undefined) return undefined;
  const delimiter = pathDelimiter(platform);
  const entries = value.split(delimiter);
  const same =
    platform === 'win32'
      ? (a: string) => a.toLowerCase() === dir.toLowerCase()
      : (a: string) => a === dir;
  const at = entries.findIndex(same);
  if (at === -1) return value;
  entries.splice(at, 1);
  return entries.length === 0 ? undefined : entries.join(delimiter);
}

/** A copy of `base` with `dir` first on its PATH, keeping the existing key casing. */
export function envWithPathEntry(base: Env, dir: string, platform: NodeJS.Platform): Env {
  const key = pathKey(base, platform);
  const copy: Env = { ...base };
  copy[key] = prependPathEntry(base[key], dir, platform);
  return copy;
}

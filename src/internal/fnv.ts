/** FNV-1a (32 bits) over `text`'s UTF-16 code units: a cheap, stable hash for names and keys, not for secrets. */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** Small helpers that make error messages name values precisely. */

/** `"up" (string)`, `-1 (number)`, `null`, `[object] (object)` — a value and its type. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return `${truncate(safeJson(value), 60)} (array)`;
  if (typeof value === 'string') return `${JSON.stringify(truncate(value, 60))} (string)`;
  if (typeof value === 'object') return `${truncate(safeJson(value), 60)} (object)`;
  if (typeof value === 'function') return 'a function';
  return `${String(value)} (${typeof value})`;
}

/** `"a", "b" or "c"`. */
export function oneOf(values: readonly string[]): string {
  const quoted = values.map((v) => JSON.stringify(v));
  if (quoted.length <= 1) return quoted.join('');
  return `${quoted.slice(0, -1).join(', ')} or ${quoted[quoted.length - 1]}`;
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** The candidate closest to `input` by edit distance, if it is close enough to be a likely typo. */
export function nearest(input: string, candidates: readonly string[]): string | undefined {
  if (input.length > 64) return undefined; // not a typo of a short name, and keeps this cheap
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const d = editDistance(input.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  const limit = Math.max(2, Math.ceil(input.length / 2));
  return bestDistance <= limit ? best : undefined;
}

/** Damerau-Levenshtein (optimal string alignment): a transposition counts as one edit. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const row = d[i] as number[];
      const prev = d[i - 1] as number[];
      let v = Math.min(
        (prev[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (prev[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        v = Math.min(v, ((d[i - 2] as number[])[j - 2] as number) + 1);
      }
      row[j] = v;
    }
  }
  return (d[rows - 1] as number[])[cols - 1] as number;
}

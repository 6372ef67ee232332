/**
 * JSONL as the protocol reads it: a line counts once its "\n" is written, so
 * a reader that meets a line still being appended sees the file as it was
 * before that line, never a part of it.
 */

/** The complete lines of a JSONL text, without their newlines. */
export function completeLines(text: string): string[] {
  const end = text.lastIndexOf('\n');
  return end === -1 ? [] : text.slice(0, end).split('\n');
}

/** Number of complete lines. */
export function countLines(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count += 1;
  return count;
}

/** The n-th (1-based) complete line, without its newline; undefined past the last. */
export function lineAt(text: string, n: number): string | undefined {
  let start = 0;
  for (let i = 1; i < n; i++) {
    const next = text.indexOf('\n', start);
    if (next === -1) return undefined;
    start = next + 1;
  }
  const end = text.indexOf('\n', start);
  return end === -1 ? undefined : text.slice(start, end);
}

// How an answer is cut into deltas (reply.ts): deterministic pieces, so a
// client must put them back together as it would a real model's stream.

/**
 * `text` in at most `max` pieces of about equal length in code points, never
 * cut inside a surrogate pair; fewer pieces when the text is shorter. An
 * empty text is one empty piece.
 */
export function codePointPieces(text: string, max: number): string[] {
  const points = Array.from(text);
  const count = Math.min(max, points.length);
  if (count <= 1) return [text];
  const pieces: string[] = [];
  for (let i = 0; i < count; i++) {
    const from = Math.floor((i * points.length) / count);
    const to = Math.floor(((i + 1) * points.length) / count);
    pieces.push(points.slice(from, to).join(''));
  }
  return pieces;
}

/**
 * `text` in at most `max` deltas cut where a word starts after white space
 * (each delta but the first begins with the white space before its word, as
 * model tokens do), the words shared out about evenly; a text of one word is
 * one delta. Joined, the deltas are `text`.
 */
export function wordPieces(text: string, max: number): string[] {
  const words = text.match(/\s*\S+/g);
  if (words === null || words.length <= 1) return [text];
  // The matches cover `text` from its start, with no gaps; white space after the last word stays with it.
  const rest = text.slice(words.join('').length);
  words[words.length - 1] += rest;
  const count = Math.min(max, words.length);
  const pieces: string[] = [];
  for (let i = 0; i < count; i++) {
    const from = Math.floor((i * words.length) / count);
    const to = Math.floor(((i + 1) * words.length) / count);
    pieces.push(words.slice(from, to).join(''));
  }
  return pieces;
}

/** @internal `1 frame`, `2 frames`: counts in messages read as words. */
export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

import { DOUBLE_WIDTH, ZERO_WIDTH } from './widths.js';

/** xterm's `IUnicodeVersionProvider` (a proposed API), as used here. */
export interface WidthProvider {
  readonly version: string;
  wcwidth(codepoint: number): 0 | 1 | 2;
  charProperties(codepoint: number, preceding: number): number;
}

/** Whether `cp` is in one of the flat [first, last, …] `ranges` (sorted). */
function within(cp: number, ranges: readonly number[]): boolean {
  let low = 0;
  let high = ranges.length / 2 - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    if (cp < (ranges[2 * mid] as number)) high = mid - 1;
    else if (cp > (ranges[2 * mid + 1] as number)) low = mid + 1;
    else return true;
  }
  return false;
}

/**
 * The cell width of a code point as wcwidth() and tmux count it (requirement
 * SP-13): 0 for combining marks and format characters, 2 for East Asian Wide
 * and Fullwidth (emoji with emoji presentation among them), else 1. xterm's
 * own default (Unicode 6) makes `😀` one cell wide, which puts the cursor one
 * column off from a real terminal for the rest of the line.
 */
export function cellWidth(cp: number): 0 | 1 | 2 {
  if (cp < 32 || (cp >= 0x7f && cp < 0xa0)) return 0;
  if (cp < 0x300) return 1;
  if (within(cp, ZERO_WIDTH)) return 0;
  return within(cp, DOUBLE_WIDTH) ? 2 : 1;
}

/**
 * The widths above for `terminal.unicode.register()`. charProperties packs
 * what xterm's UnicodeService does: bit 0 "joins the preceding character",
 * bits 1–2 the width, the rest grapheme state (not used: one code point at a
 * time, as wcwidth() and tmux).
 */
export const widthProvider: WidthProvider = {
  version: '11',
  wcwidth: cellWidth,
  charProperties(codepoint, preceding) {
    let width: number = cellWidth(codepoint);
    const precedingWidth = (preceding >> 1) & 3;
    const joins = width === 0 && preceding !== 0 && precedingWidth !== 0;
    if (joins) width = precedingWidth;
    return ((width & 3) << 1) | (joins ? 1 : 0);
  },
};

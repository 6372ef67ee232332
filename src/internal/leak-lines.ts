/**
 * The words of the leak sanitizer's `holds()` lines (LK-02): what an
 * undisposed object still holds, a readable line each. They run at report
 * time on objects that may be half broken, so a part that throws becomes a
 * line saying so instead of an error.
 */

/** A part of an object's holds: a line, some lines, or nothing. */
export type HoldPart = () => string | readonly string[] | undefined;

/**
 * Run each part and gather its lines; a part that throws gives
 * `could not read <what>: <message>`. Never throws.
 */
export function holdLines(parts: Record<string, HoldPart>): string[] {
  const lines: string[] = [];
  for (const [what, part] of Object.entries(parts)) {
    try {
      const got = part();
      if (typeof got === 'string') lines.push(got);
      else if (got !== undefined) lines.push(...got);
    } catch (error) {
      lines.push(`could not read ${what}: ${messageOf(error)}`);
    }
  }
  return lines;
}

/** An error's message on one line, whatever was thrown. */
export function messageOf(error: unknown): string {
  let text: string;
  try {
    text = error instanceof Error ? error.message : String(error);
  } catch {
    text = 'an unprintable value was thrown';
  }
  return text.split('\n')[0] ?? '';
}

/** `1 live call`, `2 live calls`. */
export function counted(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}

/** `512 B`, `1.2 KiB`, `3.0 MiB`. */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** `0.4 s`, `3.1 s`, `125 s`: a duration given in milliseconds. */
export function secondsText(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  return s < 100 ? `${s.toFixed(1)} s` : `${Math.round(s)} s`;
}

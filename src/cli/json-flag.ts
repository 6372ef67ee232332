import { readFileSync } from 'node:fs';
import { UsageError } from './exit-codes.js';

/** The text of a JSON flag's value: as given, `-` for stdin, `@FILE` for a file's contents. */
export function jsonFlagSource(command: string, flag: string, text: string): string {
  if (text === '-') return readFileSync(0, 'utf8');
  if (!text.startsWith('@')) return text;
  try {
    return readFileSync(text.slice(1), 'utf8');
  } catch (error) {
    throw new UsageError(
      command,
      `${flag} ${text}: cannot read ${text.slice(1)} (${(error as Error).message}).`,
    );
  }
}

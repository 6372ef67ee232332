import { readFileSync } from 'node:fs';
import { UsageError } from '../exit-codes.js';

/**
 * `--jsonl FILE` (`-`: stdin) of `shimkit enqueue D` and `shimkit expect D`:
 * one JSON object per line, blank lines skipped, all sent to the server in
 * one control request — 600 responses cost one process start, not 600.
 */
export function readJsonlFlag(command: string, file: string): Record<string, unknown>[] {
  let text: string;
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    throw new UsageError(
      command,
      `--jsonl ${file}: cannot read ${file === '-' ? 'stdin' : file} (${(error as Error).message}).`,
    );
  }
  const items: Record<string, unknown>[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === '') continue;
    const where = `--jsonl ${file === '-' ? '(stdin)' : file}, line ${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new UsageError(
        command,
        `${where} is not valid JSON (${(error as Error).message}): ${line.length > 60 ? `${line.slice(0, 59)}…` : line}.`,
      );
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new UsageError(
        command,
        `${where} must be one JSON object, got ${line.length > 60 ? `${line.slice(0, 59)}…` : line}.`,
      );
    }
    items.push(value as Record<string, unknown>);
  }
  if (items.length === 0) {
    throw new UsageError(command, `--jsonl ${file} holds no JSON line: nothing to add.`);
  }
  return items;
}

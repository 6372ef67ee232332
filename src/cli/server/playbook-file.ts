import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../exit-codes.js';

/** A playbook file (PB-07; `-`: stdin): its absolute path and its JSON; a file that is missing or not JSON is a usage error. */
export function readPlaybookFile(command: string, file: string): { path: string; json: unknown } {
  const path = file === '-' ? '-' : resolve(file);
  let bytes: Buffer;
  try {
    bytes = readFileSync(path === '-' ? 0 : path);
  } catch (error) {
    throw new UsageError(command, `cannot read the playbook ${file}: ${(error as Error).message}.`);
  }
  let text: string;
  try {
    // UTF-8 only (a byte order mark is dropped): another encoding would garble its prompts.
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new UsageError(
      command,
      `the playbook ${file} is not UTF-8 text; save it as UTF-8 (JSON is UTF-8).`,
    );
  }
  try {
    return { path, json: JSON.parse(text) };
  } catch (error) {
    throw new UsageError(
      command,
      `the playbook ${file} is not JSON (${(error as Error).message}). Its form: {"turns":[{"when":"…","do":[{"calls":"bash","params":{…}},{"says":"…"}]}]}.`,
    );
  }
}

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { errnoCode, ProtocolError, VANISHED } from '../queue/errors.js';
import { outPath } from '../queue/layout.js';
import { outputBytes } from '../queue/output.js';
import { responseProblem } from '../queue/response-schema.js';
import type { WireResponse } from '../queue/types.js';

/**
 * The rest of a response (cold half): files to write, base64 and JSON-line
 * output, and the parts the writer kept in out files. Relative file paths
 * are left to the OS, against the call's real cwd (one that was deleted
 * fails, as it would for the real command).
 */
export function render(genDir: string, response: WireResponse): { out: Buffer; err: Buffer } {
  for (const [file, content] of Object.entries(fileWrites(genDir, response))) {
    // The caller's files, not shimkit's: made with the caller's umask, as the real command would.
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
  return { out: stdoutBytes(genDir, response), err: stderrBytes(genDir, response) };
}

/** The bytes a response writes to stdout: `stdout` or `stdoutBase64`, then `jsonl`; or its out file. */
function stdoutBytes(genDir: string, response: WireResponse): Buffer {
  if (response.stdoutFile) return readOut(genDir, response.stdoutFile);
  return outputBytes(response.stdout, response.stdoutBase64, response.jsonl);
}

function stderrBytes(genDir: string, response: WireResponse): Buffer {
  if (response.stderrFile) return readOut(genDir, response.stderrFile);
  return outputBytes(response.stderr, response.stderrBase64);
}

/** The files a response writes: path → content. */
function fileWrites(genDir: string, response: WireResponse): Record<string, string> {
  if (!response.writeFilesFile) return response.writeFiles ?? {};
  const file = outPath(genDir, response.writeFilesFile);
  const text = readOut(genDir, response.writeFilesFile).toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new ProtocolError('a writeFiles file is not valid JSON', file, { cause });
  }
  const problem = responseProblem({ writeFiles: value }, 'a writeFiles file');
  if (problem) throw new ProtocolError(problem, file);
  return value as Record<string, string>;
}

function readOut(genDir: string, name: string): Buffer {
  const file = outPath(genDir, name);
  try {
    return readFileSync(file);
  } catch (cause) {
    const code = errnoCode(cause);
    const why = code === 'ENOENT' ? VANISHED : `an output file cannot be read (${code})`;
    throw new ProtocolError(why, file, { cause });
  }
}

import { readFileSync } from 'node:fs';
import type { Claim } from '../queue/claim.js';
import { errnoCode, ProtocolError, VANISHED } from '../queue/errors.js';
import { outPath, queuePath } from '../queue/layout.js';
import { lineAt } from '../queue/lines.js';
import { outputBytes } from '../queue/output.js';
import type { WireResponse } from '../queue/types.js';
import { cold } from './lazy.js';

/** The response the claim decided on; undefined when there is none (onExhausted: 'fail'). */
export function responseFor(claim: Claim): WireResponse | undefined {
  const { config, record } = claim;
  switch (record.source) {
    case 'queue':
    case 'repeat':
      return parseLine(claim, record.response as number);
    case 'fallback':
      return typeof config.onExhausted === 'object' ? config.onExhausted.response : {};
    case 'default':
      return config.default ?? {};
    default:
      return undefined;
  }
}

function parseLine(claim: Claim, n: number): WireResponse {
  const file = queuePath(claim.genDir);
  let value: unknown;
  try {
    value = JSON.parse(lineAt(claim.queueText, n) ?? '');
  } catch (cause) {
    throw new ProtocolError(`queue line ${n} is not valid JSON`, file, { cause });
  }
  if (!plain(value)) {
    const problem = cold().responseProblem(value, `queue line ${n}`, { wire: true });
    if (problem) throw new ProtocolError(problem, file);
  }
  return value as WireResponse;
}

/**
 * Whether a queue line is an object of only text output, exit code and
 * delay, all well-typed: the common response, accepted without loading the
 * full validator (src/queue/response-schema.ts), which checks everything else.
 */
function plain(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  for (const key of Object.keys(value)) {
    const field = (value as Record<string, unknown>)[key];
    switch (key) {
      case 'stdout':
      case 'stderr':
        if (typeof field !== 'string') return false;
        break;
      case 'exitCode':
        if (!Number.isInteger(field) || (field as number) < 0 || (field as number) > 255)
          return false;
        break;
      case 'delayMs':
        if (typeof field !== 'number' || !(field >= 0) || field === Number.POSITIVE_INFINITY)
          return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** The bytes a response writes to stdout: `stdout` or `stdoutBase64`, then `jsonl`; or its out file. */
export function stdoutBytes(genDir: string, response: WireResponse): Buffer {
  if (response.stdoutFile) return readOut(genDir, response.stdoutFile);
  return outputBytes(response.stdout, response.stdoutBase64, response.jsonl);
}

export function stderrBytes(genDir: string, response: WireResponse): Buffer {
  if (response.stderrFile) return readOut(genDir, response.stderrFile);
  return outputBytes(response.stderr, response.stderrBase64);
}

/** The files a response writes: path → content. */
export function fileWrites(genDir: string, response: WireResponse): Record<string, string> {
  if (!response.writeFilesFile) return response.writeFiles ?? {};
  const file = outPath(genDir, response.writeFilesFile);
  const text = readOut(genDir, response.writeFilesFile).toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new ProtocolError('a writeFiles file is not valid JSON', file, { cause });
  }
  const problem = cold().responseProblem({ writeFiles: value }, 'a writeFiles file');
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

import { statSync } from 'node:fs';
import { join } from 'node:path';
import { truncate } from '../internal/describe.js';
import { formatCommand } from '../queue/format.js';
import { describeMatch } from '../queue/route.js';
import type { WireMatch, WireResponse } from '../queue/types.js';
import type { MockCall } from './types.js';

/**
 * Text that makes a failing test explain itself:
 *   mock "git": 1 of 3 responses used; never used: #2 {stdout:"main"}, #3 {exitCode:1}
 */

/**
 * `{stdout:"main",exitCode:1}` — a compact, truncated view of a response.
 * A part kept in an out file shows its size, `stdout:[52428800 bytes]`
 * (`outDir` is where to find it).
 */
export function summariseResponse(response: WireResponse | string, outDir?: string): string {
  let value: Record<string, unknown>;
  try {
    value = typeof response === 'string' ? JSON.parse(response) : response;
  } catch {
    return truncate(String(response), 60);
  }
  if (typeof value !== 'object' || value === null) return truncate(String(response), 60);
  const parts = Object.entries(value).map(([key, field]) => {
    const kept = /^(stdout|stderr|writeFiles)File$/.exec(key);
    if (kept && typeof field === 'string') {
      return `${kept[1]}:[${outDir ? sizeOf(join(outDir, field)) : 'a'} bytes]`;
    }
    if (key === 'jsonl' && Array.isArray(field)) return `jsonl:[${field.length} values]`;
    if (key === 'match' && field && typeof field === 'object') {
      return `match:{${describeMatch(field as WireMatch)}}`;
    }
    if (key === 'writeFiles' && field && typeof field === 'object') {
      return `writeFiles:{${Object.keys(field)
        .map((p) => JSON.stringify(truncate(p, 30)))
        .join(',')}}`;
    }
    if (typeof field === 'string') return `${key}:${JSON.stringify(truncate(field, 30))}`;
    return `${key}:${JSON.stringify(field)}`;
  });
  return `{${parts.join(',')}}`;
}

function sizeOf(file: string): string {
  try {
    return String(statSync(file).size);
  } catch {
    return 'missing';
  }
}

/** `#2 git push → response #2, exit 1` */
export function formatCall(name: string, call: MockCall): string {
  const source =
    call.responseSource === 'queue'
      ? `response #${call.response}`
      : call.responseSource === 'repeat'
        ? `repeat of #${call.response}`
        : call.responseSource === 'fallback'
          ? 'onExhausted fallback'
          : call.responseSource === 'default'
            ? 'default response'
            : call.responseSource === 'passthrough'
              ? 'the real command'
              : 'no response';
  const outcome =
    call.status === 'exited'
      ? call.signal
        ? `ended by ${call.signal}`
        : `exit ${call.exitCode}`
      : call.status === 'timed-out'
        ? 'timed out'
        : call.status === 'unmatched'
          ? 'unmatched'
          : call.status;
  return `#${call.index} ${formatCommand(name, call.argv)} → ${source}, ${outcome}`;
}

export function formatCalls(name: string, calls: readonly MockCall[]): string {
  if (calls.length === 0) return 'no calls were recorded';
  return [`calls (${calls.length}):`, ...calls.map((c) => `  ${formatCall(name, c)}`)].join('\n');
}

import type { Claim } from '../queue/claim.js';
import { ProtocolError } from '../queue/errors.js';
import { queuePath } from '../queue/layout.js';
import { lineAt } from '../queue/lines.js';
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
    case 'passthrough':
      return { passthrough: true };
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
 * Whether a queue line is an object of only text output, exit code, delay
 * and routing fields, all well-typed: the common response, accepted without loading the
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
      // Routing fields were checked by the routed claim that chose this line (route-claim.ts).
      case 'match':
        break;
      case 'times':
        if (field !== 'always' && !(Number.isInteger(field) && (field as number) >= 1))
          return false;
        break;
      case 'optional':
        if (typeof field !== 'boolean') return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/**
 * What a response writes: files (relative paths against the call's real cwd,
 * so a deleted cwd fails as it would for the real command), then the bytes
 * for stdout and stderr. A response of plain text needs nothing else; the
 * rest (base64, JSON lines, out files, files) is rendered by the cold half.
 */
export function render(genDir: string, response: WireResponse): { out: Buffer; err: Buffer } {
  if (plain(response)) {
    return { out: Buffer.from(response.stdout ?? ''), err: Buffer.from(response.stderr ?? '') };
  }
  return cold().render(genDir, response);
}

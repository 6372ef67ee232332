import type { AnyValue } from '../queue/types.js';

const ANY: AnyValue = Object.freeze({ any: true as const });

/**
 * A matcher element that fits any value that is there: an argument at that
 * position, a cwd, a set env var (requirement MB-13).
 *
 * @example
 * git.enqueue({ match: { args: ['-C', any(), 'push'] }, exitCode: 1 });
 */
export function any(): AnyValue {
  return ANY;
}

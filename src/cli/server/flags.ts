import type { FlagSpecs } from '../args.js';

/**
 * The response flags of `shimkit expect` and `shimkit enqueue` on a server
 * dir: one kind (`--sse-chat`, `--sse-responses`, `--sse-messages`,
 * `--status`, `--json`) and what may be added to it (delays, a cut), as the
 * MockServerResponse the server checks (its errors name the field).
 */
export const RESPONSE_FLAGS: FlagSpecs = {
  'sse-chat': { kind: 'list', value: 'TEXT' },
  'sse-responses': { kind: 'list', value: 'TEXT' },
  'sse-messages': { kind: 'list', value: 'TEXT' },
  status: { kind: 'value', value: 'N' },
  'retry-after-ms': { kind: 'value', value: 'MS' },
  'retry-after': { kind: 'value', value: 'S' },
  json: { kind: 'value', value: 'RESPONSE' },
  'event-delay': { kind: 'value', value: 'MS' },
  delay: { kind: 'value', value: 'MS' },
  'cut-after-events': { kind: 'value', value: 'N' },
  cut: { kind: 'value', value: 'fin|rst|stall' },
};

/** The flags of `shimkit enqueue` on a server dir. */
export const SERVER_ENQUEUE_FLAGS: FlagSpecs = {
  times: { kind: 'value', value: 'N|always' },
  optional: { kind: 'switch' },
  jsonl: { kind: 'value', value: 'FILE' },
  ...RESPONSE_FLAGS,
};

/** Whether any response flag was given (a kind, or what is added to one). */
export function hasResponseFlags(args: {
  values: ReadonlyMap<string, string>;
  lists: ReadonlyMap<string, string[]>;
}): boolean {
  return Object.keys(RESPONSE_FLAGS).some((flag) => args.values.has(flag) || args.lists.has(flag));
}

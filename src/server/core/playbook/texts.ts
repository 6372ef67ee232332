import { argFits, describeArg } from '../../../internal/matcher.js';
import type { WireAction } from '../../playbook/wire.js';
import type { WireValue } from '../../protocol.js';

/**
 * What a playbook says when a request does not go as scripted (PB-02,
 * PB-05), in the seed harness's words with the wire facts: which step
 * expected what, and what came. The same text is the 500's
 * `error.message`, the log entry's `error` and a line of `assertDone()`.
 */

/** A call of the answer before, as a later request must answer it. */
export interface SentCall {
  toolCallId: string;
  toolName: string;
  step: number;
  turn: number;
  /** Its `.then()` functions. */
  thens: number[];
}

/** `step 2 (turn 1: says("Found 2 files."))` */
export function stepText(action: WireAction): string {
  return `step ${action.step} (turn ${action.turn}: ${action.describe})`;
}

/** How much of a prompt a message shows. */
const SHOWN = 200;

/** Why `prompt` does not fit the turn's, or undefined when it does. */
export function promptMismatch(want: WireValue, prompt: string | undefined): string | undefined {
  if (typeof want !== 'string' && 'any' in want) return undefined;
  const expected =
    typeof want === 'string'
      ? `the prompt ${quoted(want.trim())} (compared after trimming)`
      : `a prompt matching ${describeArg(want)}`;
  if (prompt === undefined) {
    return `expected ${expected} as its last user text, and it has no user message`;
  }
  if (typeof want !== 'string') {
    return argFits(want, prompt)
      ? undefined
      : `expected ${expected} as its last user text, and it came as ${quoted(prompt)}`;
  }
  const a = want.trim();
  const b = prompt.trim();
  if (a === b) return undefined;
  return `expected ${expected} as its last user text, and it came as ${quoted(prompt)} (${firstDifference(a, b)})`;
}

/** `"List files"`, cut to SHOWN characters with the length said. */
function quoted(text: string): string {
  if (text.length <= SHOWN) return JSON.stringify(text);
  return `${JSON.stringify(text.slice(0, SHOWN))}… (${text.length} characters)`;
}

/** Where two trimmed prompts first differ, the characters named when they may look alike. */
function firstDifference(want: string, got: string): string {
  let i = 0;
  while (i < want.length && i < got.length && want[i] === got[i]) i++;
  if (i === got.length)
    return `it ends at character ${i + 1}, where ${codePoint(want, i)} was expected`;
  if (i === want.length) return `it goes on from character ${i + 1} with ${codePoint(got, i)}`;
  return `they first differ at character ${i + 1}: ${codePoint(got, i)} where ${codePoint(want, i)} was expected`;
}

/** `U+00A0 ( )`: a character by its code point, and itself when it prints. */
function codePoint(text: string, at: number): string {
  const point = text.codePointAt(at) ?? 0;
  const char = String.fromCodePoint(point);
  const name = `U+${point.toString(16).toUpperCase().padStart(4, '0')}`;
  return /^[\p{L}\p{N}\p{P}\p{S}]$/u.test(char) ? `${name} "${char}"` : name;
}

/**
 * Why a turn's first request that carries the results of the turn before
 * is refused: that turn ended with a tool call, so the agent asks again to
 * answer its result, and no action of that turn is left.
 */
export function endedWithCalls(previous: WireAction | undefined): string | undefined {
  if (previous === undefined || previous.kind !== 'calls') return undefined;
  return `expected the prompt of turn ${previous.turn + 1}, and it carries the results of ${previous.describe} (step ${previous.step}): turn ${previous.turn} ended with that tool call, so the agent asked the model again to answer its result, and turn ${previous.turn} has no action left. End turn ${previous.turn} with says(…) (or more calls) for that request`;
}

/** Why a request without a result for each call of the answer before is refused. */
export function resultsMismatch(
  sent: readonly SentCall[],
  missing: readonly SentCall[],
  got: readonly string[],
): string {
  const before = sent.map((c) => `${c.toolCallId} (${c.toolName})`).join(', ');
  const lack = missing.map((c) => `${c.toolCallId} (${c.toolName})`).join(', ');
  const carried =
    got.length === 0
      ? 'it carries no tool result'
      : `it carries results for ${got.slice(0, 10).join(', ')}${got.length > 10 ? ` and ${got.length - 10} more` : ''}`;
  return `expected a tool result for each call of the answer before (${before}), and ${lack} ${missing.length === 1 ? 'has' : 'have'} none: ${carried}`;
}

/** The 500 of a refused request: nothing was taken, the same step answers the next request that fits. */
export function refusedText(
  name: string,
  label: string,
  action: WireAction,
  why: string,
  last: string,
): string {
  return `shimkit: playbook '${name}' refused ${label}: ${stepText(action)} ${why}. Its last message: ${last}. Nothing was taken: the same step answers the next request that fits.`;
}

/** "Playbook exhausted: consumed 2 of 2 actions …" — a request after the last action, that nothing else took. */
export function exhaustedText(
  name: string,
  total: number,
  last: { step: number; turn: number; describe: string } | undefined,
  label: string,
  lastMessage: string,
): string {
  const consumed = `consumed ${total} of ${total} action${total === 1 ? '' : 's'} (playbook '${name}')`;
  const lastText =
    last === undefined
      ? ''
      : `; last consumed: ${last.describe} at step ${last.step} (turn ${last.turn})`;
  return `Playbook exhausted: ${consumed}${lastText}. Then ${label} asked for more; its last message: ${lastMessage}. The agent made more model requests than the playbook has actions: often a tool result it did not expect (an error it retries or works around) or a loop of its own. Add the actions it needs; what its tools returned is in the playbook's toolResults() (from the CLI: shimkit tool-results).`;
}

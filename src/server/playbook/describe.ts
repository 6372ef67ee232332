import { truncate } from '../../internal/describe.js';

/**
 * Actions in the seed harness's words, for diagnostics and `remaining()`:
 * `calls("bash", {"command":"ls"})`, `says("Done.")`,
 * `parallel(calls("a", {}), calls("b", {}))`. Long params and texts are
 * cut to keep a report readable. The worker uses it too (its answers'
 * params are known there), so it imports only ground-floor helpers.
 */

/** How much of a params' JSON or a text a description shows. */
const SHOWN = 200;

/** What a call's params are shown as before a late-bound function gave them. */
export const LATE_BOUND = '() => …';

/** `calls("bash", {"command":"ls"})`; `params` is the JSON text, or undefined while late-bound. */
export function describeCall(tool: string, params: string | undefined): string {
  return `calls(${JSON.stringify(tool)}, ${params === undefined ? LATE_BOUND : truncate(params, SHOWN)})`;
}

/** `says("Done.")` */
export function describeSays(text: string): string {
  return `says(${truncate(JSON.stringify(text), SHOWN)})`;
}

/** One call alone, or `parallel(…)` of several. */
export function describeCalls(
  calls: ReadonlyArray<{ tool: string; params: string | undefined }>,
  parallel: boolean,
): string {
  const each = calls.map((c) => describeCall(c.tool, c.params));
  return parallel ? `parallel(${each.join(', ')})` : (each[0] ?? '');
}

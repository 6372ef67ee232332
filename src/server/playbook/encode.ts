import type { WireRequestMatch, WireValue } from '../protocol.js';
import {
  CallsAction,
  type LateParams,
  type PlaybookAction,
  type PromptMatch,
  type ThenCallback,
  type Turn,
} from './actions.js';
import { describeCalls, describeSays } from './describe.js';
import type { WireAction, WireCall, WirePlaybook } from './wire.js';

/** A function the worker asks the test's thread to run: a `.then()` or late-bound params. */
export type PlaybookFunction = ThenCallback | LateParams;

/**
 * Turns (checked by `when()`) as the worker serves them: steps numbered
 * from 1 across the playbook, each function kept on the test's thread
 * under an id (`keep`), params as JSON text.
 */
export function encodePlaybook(
  turns: readonly Turn[],
  id: number,
  name: string,
  match: WireRequestMatch,
  keep: (fn: PlaybookFunction, kind: 'then' | 'params') => number,
): WirePlaybook {
  const actions: WireAction[] = [];
  turns.forEach((turn, t) => {
    turn.actions.forEach((action, i) => {
      actions.push(encodeAction(action, actions.length + 1, t + 1, i === 0, keep));
    });
  });
  return { id, name, match, prompts: turns.map((turn) => encodePrompt(turn.prompt)), actions };
}

function encodeAction(
  action: PlaybookAction,
  step: number,
  turn: number,
  first: boolean,
  keep: (fn: PlaybookFunction, kind: 'then' | 'params') => number,
): WireAction {
  if (action.kind === 'says') {
    return {
      step,
      turn,
      first,
      kind: 'says',
      text: action.text,
      describe: describeSays(action.text),
    };
  }
  const list = action instanceof CallsAction ? [action] : action.calls;
  const calls: WireCall[] = list.map((call) => {
    const wire: WireCall = { tool: call.tool, thens: call.thens.map((fn) => keep(fn, 'then')) };
    if (typeof call.params === 'function') wire.params = keep(call.params, 'params');
    else wire.arguments = JSON.stringify(call.params);
    return wire;
  });
  const describe = describeCalls(
    calls.map((c) => ({ tool: c.tool, params: c.arguments })),
    action.kind === 'parallel',
  );
  return { step, turn, first, kind: 'calls', calls, describe };
}

function encodePrompt(prompt: PromptMatch): WireValue {
  if (typeof prompt === 'string') return prompt;
  if (prompt instanceof RegExp) {
    return { regex: prompt.source, flags: prompt.flags.replace(/[gy]/g, '') };
  }
  return { any: true };
}

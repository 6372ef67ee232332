import { formatRequest } from '../logged.js';
import type { LoggedRequest } from '../types.js';
import type { PlaybookNews, ToolCallRecord, ToolResultRecord, TurnRecord } from './wire.js';

/**
 * A playbook as the test's thread knows it (the mirror's part, SPEC PB):
 * rebuilt from the worker's news, which comes before the bytes it
 * describes, so the records are exact once the agent saw its answer.
 */
export interface PlaybookState {
  id: number;
  gen: number;
  name: string;
  /** Each action: its step, turn, description (as sent, once it was), and which of its calls have a `.then()`. */
  steps: Array<{ step: number; turn: number; describe: string; thens: boolean[] }>;
  /** How many actions were taken (they are taken in order). */
  consumed: number;
  calls: ToolCallRecord[];
  results: ToolResultRecord[];
  turns: TurnRecord[];
  /** Refused requests, the exhaustion, failed functions: each a text of assertDone(). */
  failures: string[];
  /** The requests it answered (or refused), in claim order. */
  requests: LoggedRequest[];
  /** Its `.then()`s running on the test's thread now. */
  running: number;
}

export function applyNews(state: PlaybookState, news: PlaybookNews): void {
  switch (news.kind) {
    case 'step':
      state.consumed = Math.max(state.consumed, news.step);
      return;
    case 'turn':
      state.turns.push(news.record);
      return;
    case 'calls': {
      state.calls.push(...news.calls);
      const step = state.steps[news.step - 1];
      if (step) step.describe = news.describe;
      return;
    }
    case 'results':
      state.results.push(...news.records);
      return;
    case 'failure':
      state.failures.push(news.text);
      return;
  }
}

/** Whether every action was taken, every `.then()` ran and nothing went wrong. */
export function isDone(state: PlaybookState): boolean {
  return (
    state.consumed >= state.steps.length &&
    state.failures.length === 0 &&
    state.running === 0 &&
    pendingThens(state).length === 0
  );
}

/**
 * The `.then()`s of calls answered with whose result never came (the agent
 * ended its loop on that call, or the playbook ended before it): their
 * callbacks, and any assertion in them, never ran.
 */
export function pendingThens(
  state: PlaybookState,
): Array<{ step: number; toolName: string; toolCallId: string }> {
  const answered = new Set(state.results.map((r) => r.toolCallId));
  const pending: Array<{ step: number; toolName: string; toolCallId: string }> = [];
  for (const step of state.steps.slice(0, state.consumed)) {
    if (!step.thens.includes(true)) continue;
    const sent = state.calls.filter((c) => c.step === step.step);
    step.thens.forEach((then, k) => {
      const call = sent[k];
      if (then && call !== undefined && !answered.has(call.toolCallId)) {
        pending.push({ step: step.step, toolName: call.toolName, toolCallId: call.toolCallId });
      }
    });
  }
  return pending;
}

/**
 * What `assertDone()` says of a playbook (undefined when it is done): the
 * actions left, in the seed harness's words, then every failure.
 *
 *   Playbook not fully consumed: consumed 1 of 3 actions (playbook 'deploy'); remaining:
 *     - calls("write", {"path":"out.txt"}) (step 2, turn 1)
 *     - says("Done.") (step 3, turn 1)
 */
export function playbookReport(state: PlaybookState): string | undefined {
  const lines: string[] = [];
  const total = state.steps.length;
  if (state.running > 0) {
    lines.push(
      `${state.running} .then() of playbook '${state.name}' ${state.running === 1 ? 'is' : 'are'} still running on the test's thread: its assertions have not run yet (await play.waitDone() first).`,
    );
  }
  if (state.consumed < total) {
    lines.push(
      `Playbook not fully consumed: consumed ${state.consumed} of ${total} action${total === 1 ? '' : 's'} (playbook '${state.name}'); remaining:`,
    );
    for (const step of state.steps.slice(state.consumed)) {
      lines.push(`  - ${step.describe} (step ${step.step}, turn ${step.turn})`);
    }
    const asked = state.requests;
    lines.push(
      `  The agent stopped asking before every action was used: a tool may have been blocked, failed or returned early, or the agent ended its loop, so it made fewer model requests than the playbook has actions. ${asked.length === 0 ? 'No request reached the playbook: check its match and that the agent uses this server (env()).' : `Its requests: ${asked.slice(-5).map(formatRequest).join('; ')}.`}`,
    );
  }
  for (const failure of state.failures) lines.push(failure);
  for (const then of pendingThens(state)) {
    lines.push(
      `The .then() of calls(${JSON.stringify(then.toolName)}) at step ${then.step} (playbook '${state.name}') never ran: no request carried a result for ${then.toolCallId}, so its callback, and any assertion in it, did not run. The agent ended its loop on that call, or sent its result when no action was left.`,
    );
  }
  return lines.length === 0 ? undefined : lines.join('\n');
}

/** `remaining()`: the actions not taken yet. */
export function remainingOf(
  state: PlaybookState,
): Array<{ step: number; turn: number; describe: string }> {
  return state.steps
    .slice(state.consumed)
    .map(({ step, turn, describe }) => ({ step, turn, describe }));
}

export function byTool<T extends { toolName: string }>(records: readonly T[], name: string): T[] {
  return records.filter((r) => r.toolName === name);
}

export type { ToolCallRecord, ToolResultRecord, TurnRecord };

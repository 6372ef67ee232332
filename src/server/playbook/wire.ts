// The messages of agent playbooks (SPEC PB) between the test's thread and
// the server's worker thread, beside src/server/protocol.ts. Types only,
// structured-clone data: functions (`.then()`, late-bound params) stay on
// the test's thread under an id, as predicates and response functions do.
import type { WireRequestMatch, WireValue } from '../protocol.js';

/** One tool call of an action: its params as JSON text, or the id of the function that gives them. */
export interface WireCall {
  tool: string;
  /** The params' JSON text, when they were given as data. */
  arguments?: string;
  /** The id of the late-bound params function, run when the request that gets the call arrives. */
  params?: number;
  /** The ids of its `.then()` functions, in order. */
  thens: number[];
}

/** One action: one model answer. */
export interface WireAction {
  /** 1-based, across the whole playbook. */
  step: number;
  /** 1-based. */
  turn: number;
  /** The first action of its turn: its request carries the turn's prompt. */
  first: boolean;
  kind: 'calls' | 'says';
  /** `says`: the text. */
  text?: string;
  /** `calls`: one call, or several for `parallel()`. */
  calls?: WireCall[];
  /** The seed's form, `calls("bash", {"command":"ls"})`, with `<late-bound>` for params not known yet. */
  describe: string;
}

/** A playbook as the worker serves it. */
export interface WirePlaybook {
  /** 1-based per server generation (`playbook#<n>`); its ids say `p<n>`. */
  id: number;
  name: string;
  /** The requests it takes, beside being a model request (POST to one of the model endpoints). */
  match: WireRequestMatch;
  /** Each turn's prompt: a string (compared after trimming), a pattern, or any(). */
  prompts: WireValue[];
  actions: WireAction[];
}

/** A tool call as sent in an answer (PB-03). */
export interface ToolCallRecord {
  /** The action's step (1-based across the playbook); a `parallel()` shares one. */
  step: number;
  turn: number;
  toolName: string;
  toolCallId: string;
  /** The params as sent (late-bound ones as their function gave them). */
  params: Record<string, unknown>;
  /** The request that got the call. */
  seq: number;
}

/** A tool result as received (PB-03): `step` and `turn` are those of the call it answers. */
export interface ToolResultRecord {
  step: number;
  turn: number;
  toolName: string;
  toolCallId: string;
  /** The result's text parts joined with nothing between them. */
  text: string;
  /** Exactly as sent: a string stays a string. */
  content: unknown;
  /** Anthropic's `is_error`; false for the OpenAI formats, which have none. */
  isError: boolean;
  /** The request that carried it. */
  seq: number;
}

/** A turn as received (PB-03). */
export interface TurnRecord {
  /** 1-based. */
  turn: number;
  /** The text of the last user message of the turn's first request, as received. */
  prompt: string;
  /** That request. */
  seq: number;
}

/** What the worker tells the test's thread about a playbook, before the bytes it describes. */
export type PlaybookNews =
  /** A request took action `step` (consumed counts them). */
  | { kind: 'step'; step: number; seq: number }
  | { kind: 'turn'; record: TurnRecord }
  /** The calls of a step as sent (after late-bound params were resolved). */
  | { kind: 'calls'; step: number; calls: ToolCallRecord[]; describe: string }
  | { kind: 'results'; records: ToolResultRecord[] }
  /** A request it refused, the exhaustion, a function of the test that failed: text for assertDone(). */
  | { kind: 'failure'; text: string; seq: number };

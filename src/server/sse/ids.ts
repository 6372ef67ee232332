// The deterministic values the SSE builders write unless told otherwise
// (docs/design/sse-wire-formats.md). Nothing counts across calls: the same
// call gives the same bytes, for snapshots, cassettes and `cut.afterBytes`.
// Numbered ids (`call_shimkit_1`, `call_shimkit_2`) count within one response.

/** The model every builder names. */
export const SHIMKIT_MODEL = 'shimkit-model';
/** `created` / `created_at` (2023-11-14T22:13:20Z). */
export const SHIMKIT_CREATED = 1_700_000_000;
/** Prompt / input tokens reported when `usage` does not say. */
export const SHIMKIT_INPUT_TOKENS = 9;

/** Chat Completions: the completion's id. */
export const CHAT_ID = 'chatcmpl-shimkit-1';
/** Chat Completions: `system_fingerprint`. */
export const SYSTEM_FINGERPRINT = 'fp_shimkit';
/** Chat Completions and the Responses API: the n-th tool call's id (1-based). */
export const callId = (n: number): string => `call_shimkit_${n}`;

/** Responses API: the response's id. */
export const RESPONSE_ID = 'resp_shimkit_1';
/** Responses API: the message item's id. */
export const MESSAGE_ITEM_ID = 'msg_shimkit_1';
/** Responses API: the reasoning item's id. */
export const REASONING_ITEM_ID = 'rs_shimkit_1';
/** Responses API: the n-th function call item's id (1-based). */
export const functionItemId = (n: number): string => `fc_shimkit_${n}`;

/** Anthropic Messages: the message's id. */
export const ANTHROPIC_MESSAGE_ID = 'msg_shimkit_1';
/** Anthropic Messages: the n-th tool_use block's id (1-based). */
export const toolUseId = (n: number): string => `toolu_shimkit_${n}`;
/** Anthropic Messages: a thinking block's signature (base64 of `shimkit`). */
export const THINKING_SIGNATURE = 'c2hpbWtpdA==';

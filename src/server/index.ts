// The mock server's public names; src/index.ts re-exports them.
// Core (createMockServer, its classes, options and log types):
export type {
  CassetteInteraction,
  RecordedRequest,
  RecordedResponse,
  RecordedSseEvent,
  ServerCassette,
  ServerCassetteMode,
  ServerCassetteOptions,
} from './cassette-format.js';
export { createMockServer } from './create.js';
export { MockServerListenError, PlaybookError, ServerWorkerError } from './errors.js';
export { Expectation } from './expectation.js';
export { HeldRequest } from './hold.js';
export { MockServer } from './mock-server.js';
export type { MockServerOptions, UnmatchedHandler } from './options.js';
// Agent playbooks (SPEC PB): the DSL, the Playbook and its records.
export {
  CallsAction,
  calls,
  type LateParams,
  ParallelAction,
  type PlaybookAction,
  type PromptMatch,
  parallel,
  SaysAction,
  says,
  type ThenCallback,
  type ToolParams,
  type Turn,
  when,
} from './playbook/actions.js';
export type { PlaybookJson } from './playbook/json.js';
export { Playbook, type RemainingAction } from './playbook/playbook.js';
export type { ToolCallRecord, ToolResultRecord, TurnRecord } from './playbook/wire.js';
// Builders (sse.*, reply.*) and their option types:
export {
  reply,
  type StatusReplyOptions,
  type WireReplyOptions,
} from './reply.js';
export type { ExpectOptions, HoldOptions, PlaybookOptions } from './script.js';
export type { ChatStreamError, ChatStreamOptions, ChatToolCall, ChatUsage } from './sse/chat.js';
export { sse } from './sse/index.js';
export type {
  MessagesStreamOptions,
  MessagesThinking,
  MessagesToolUse,
  MessagesUsage,
} from './sse/messages.js';
export type { ResponseOptions } from './sse/options.js';
export type {
  ResponsesFunctionCall,
  ResponsesStreamOptions,
  ResponsesUsage,
} from './sse/responses.js';
export type {
  LoggedRequest,
  LoggedResponse,
  MockServerResponse,
  RequestMatch,
  ResponseChunk,
  ResponseCut,
  ResponseHandler,
  SseEvent,
} from './types.js';

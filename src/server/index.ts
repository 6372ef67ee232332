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
export { MockServerListenError, ServerWorkerError } from './errors.js';
export { Expectation } from './expectation.js';
export { HeldRequest } from './hold.js';
export { MockServer } from './mock-server.js';
export type { MockServerOptions, UnmatchedHandler } from './options.js';
// Builders (sse.*, reply.*) and their option types:
export {
  reply,
  type StatusReplyOptions,
  type WireReplyOptions,
} from './reply.js';
export type { ExpectOptions, HoldOptions } from './script.js';
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

// The mock server's builders and vocabulary, as the public door
// (src/index.ts) exports them. createMockServer is exported beside these.

export {
  reply,
  type StatusReplyOptions,
  type WireReplyOptions,
} from './reply.js';
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
  MockServerResponse,
  ResponseChunk,
  ResponseCut,
  SseEvent,
} from './types.js';

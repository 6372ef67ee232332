// The mock server's public names; src/index.ts re-exports them.
// Core (createMockServer, its classes, options and log types):
export { createMockServer } from './create.js';
export { MockServerListenError, ServerWorkerError } from './errors.js';
export { Expectation } from './expectation.js';
export { HeldRequest } from './hold.js';
export { MockServer } from './mock-server.js';
export type { MockServerOptions, UnmatchedHandler } from './options.js';
export type { ExpectOptions, HoldOptions } from './script.js';
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

/**
 * shimkit: test programs that spawn other programs.
 *
 * The one public door: everything a user may import is exported here.
 */
export {
  CallAssertionError,
  DisposedError,
  InvalidOptionError,
  InvalidResponseError,
  NotBuiltError,
  ShimkitError,
  UnsupportedHereError,
  UnusedResponsesError,
  WaitTimeoutError,
} from './internal/errors.js';
export type { LeakKind } from './internal/leak-registry.js';
export {
  type SweepOptions,
  type SweepReport,
  sweepLeftovers,
} from './internal/leftovers/sweep-leftovers.js';
export type {
  LeakAllow,
  LeakCategory,
  LeakMode,
  LeakPolicy,
} from './leaks/policy.js';
export {
  type LeakedObject,
  type LeakOrigin,
  type LeakReport,
  LeakScope,
  type LeakScopeKind,
  type ReportedProcess,
  type SanitizeOptions,
  sanitize,
} from './leaks/sanitize.js';
export type {
  LeakedProcess,
  ProcessLink,
} from './leaks/scan.js';
export {
  createMockBinDir,
  MockBinDir,
  type MockBinDirOptions,
  openMockBinDir,
} from './mock-binary/bin-dir.js';
export {
  CASSETTE_MODE_VAR,
  type Cassette,
  type CassetteCall,
  type CassetteMode,
  type CassetteOptions,
} from './mock-binary/cassette.js';
export { createMockBinary } from './mock-binary/create.js';
export { HeldCall, type LiveCallInfo, type LiveHandler } from './mock-binary/live.js';
export { any } from './mock-binary/match.js';
export { MockBinary } from './mock-binary/mock-binary.js';
export type {
  MockBinaryOptions,
  MockCall,
  MockCallStatus,
  MockResponse,
  WaitForCallsOptions,
} from './mock-binary/types.js';
export { PackedInstallError } from './pack/errors.js';
export type {
  BinExpect,
  BinRun,
  ImportChecks,
  PackedInstallOptions,
} from './pack/options.js';
export {
  formatPackedInstallReport,
  type PackCheck,
  type PackCheckKind,
  type PackedInstallReport,
} from './pack/report.js';
export { verifyPackedInstall } from './pack/verify.js';
export {
  CommandNotFoundError,
  ProcessExitedError,
  ProcessNotEndedError,
  SpawnError,
  StdinNotWritableError,
  type StdinState,
} from './process/errors.js';
export { GitSetupError } from './process/git.js';
export type { Responder, RespondOptions, SendOptions } from './process/interaction.js';
export type { RunOptions, SpawnProcessOptions } from './process/options.js';
export { NotATerminalError, PtyUnavailableError } from './process/pty/errors.js';
export type { PtyOptions } from './process/pty/options.js';
export type { ScreenSnapshot } from './process/pty/screen.js';
export { type RunResult, run } from './process/run.js';
export {
  createSandbox,
  formatSandboxDiagnostics,
  type SandboxDiagnostics,
  type SandboxOptions,
  type SandboxPathEntry,
  TestSandbox,
} from './process/sandbox.js';
export {
  type OutputSource,
  type OutputStream,
  type ProcessExit,
  spawnProcess,
  TestProcess,
  type WaitResult,
} from './process/test-process.js';
export type { Address, ListenAddress, TcpAddress } from './proxy/address.js';
export type { Clock } from './proxy/clock.js';
export { type ManualClock, type ManualClockOptions, manualClock } from './proxy/clock.js';
export { type ConnectionStats, ProxyConnection, type SeverMode } from './proxy/connection.js';
export type { WayCount } from './proxy/counters.js';
export { createFrameProxy } from './proxy/create.js';
export { FrameDecoder, type FrameDecoderOptions } from './proxy/decoder.js';
export {
  FrameDecodeError,
  FrameMalformedError,
  FrameTooLargeError,
  ProxyListenError,
  StreamEndedError,
  UpstreamConnectError,
} from './proxy/errors.js';
export type {
  Direction,
  FaultAction,
  FaultRule,
  FrameSelector,
  HoldRule,
  SeedFaultPlan,
  Way,
} from './proxy/faults.js';
export { encodeFrame, type Framing } from './proxy/framing.js';
export { FrameHold } from './proxy/hold.js';
export { FrameProxy } from './proxy/proxy.js';
export type {
  FaultEvent,
  FrameEvent,
  FrameProxyOptions,
  FrameProxyStats,
} from './proxy/proxy-options.js';
export { createFrameReader, FrameReader, type FrameReaderOptions } from './proxy/reader.js';
export type { FrameRecord, RecordOptions } from './proxy/recorder.js';
export type { Framer } from './proxy/splitter.js';
export {
  proxyStdio,
  type StdioExit,
  StdioProxy,
  type StdioProxyOptions,
} from './proxy/stdio.js';
export { ProtocolError, StateWriteError } from './queue/errors.js';
export { MockExitCode } from './queue/exit-codes.js';
export type {
  AnyValue,
  ArgMatcher,
  MockMatch,
  PassthroughFaults,
  PassthroughStats,
  ResponseSource,
} from './queue/types.js';
export {
  CallsAction,
  type CassetteInteraction,
  type ChatStreamError,
  type ChatStreamOptions,
  type ChatToolCall,
  type ChatUsage,
  calls,
  createMockServer,
  Expectation,
  type ExpectOptions,
  HeldRequest,
  type HoldOptions,
  type LateParams,
  type LoggedRequest,
  type LoggedResponse,
  type MessagesStreamOptions,
  type MessagesThinking,
  type MessagesToolUse,
  type MessagesUsage,
  MockServer,
  MockServerListenError,
  type MockServerOptions,
  type MockServerResponse,
  ParallelAction,
  Playbook,
  type PlaybookAction,
  PlaybookError,
  type PlaybookJson,
  type PlaybookOptions,
  type PromptMatch,
  parallel,
  type RecordedRequest,
  type RecordedResponse,
  type RecordedSseEvent,
  type RemainingAction,
  type RequestMatch,
  type ResponseChunk,
  type ResponseCut,
  type ResponseHandler,
  type ResponseOptions,
  type ResponsesFunctionCall,
  type ResponsesStreamOptions,
  type ResponsesUsage,
  reply,
  SaysAction,
  type ServerCassette,
  type ServerCassetteMode,
  type ServerCassetteOptions,
  ServerWorkerError,
  type SseEvent,
  type StatusReplyOptions,
  says,
  sse,
  type ThenCallback,
  type ToolCallRecord,
  type ToolParams,
  type ToolResultRecord,
  type Turn,
  type TurnRecord,
  type UnmatchedHandler,
  type WireReplyOptions,
  when,
} from './server/index.js';

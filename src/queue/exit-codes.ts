/**
 * Exit codes the shim uses for its own diagnostics. A scripted `exitCode` may
 * be any of 0–255, these included: a diagnostic is told apart by its stderr
 * line (`shimkit: …`) and by the call record's `status`, never by the code alone.
 */
export const MockExitCode = {
  /** The call outlived the mock's `timeoutMs` (same code as coreutils `timeout`). */
  timeout: 124,
  /** The queue was exhausted and `onExhausted: 'fail'` is set. */
  unmatched: 123,
  /** The mock's state dir is missing, unreadable or malformed. */
  broken: 122,
} as const;

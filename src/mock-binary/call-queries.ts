// The call-query and assertion half of MockBinary: nthCall(), assertNthCall(),
// waitForCalls() and the assertDone() / strict-dispose report, as functions of
// a small view of the mock (CallView) so the class only delegates.
import { describeValue } from '../internal/describe.js';
import { CallAssertionError, InvalidOptionError, WaitTimeoutError } from '../internal/errors.js';
import { DEFAULT_WAIT_MS } from '../internal/limits.js';
import { describeArg } from '../internal/matcher.js';
import { checkOptionKeys } from '../internal/options.js';
import { countCalls, type RecordCache, readSnapshot } from '../queue/reader.js';
import { mismatch } from '../queue/route.js';
import type { ArgMatcher, WireArg } from '../queue/types.js';
import { callsOf, notDoneReport } from './calls.js';
import { formatCalls } from './diagnostics.js';
import { toWireArgs } from './options.js';
import type { MockCall, WaitForCallsOptions } from './types.js';

/** What the call queries need of a mock. */
export interface CallView {
  /** The command name, for messages. */
  readonly name: string;
  /** The mock's state dir. */
  readonly stateDir: string;
  /** The mock's record cache (records are read once, see RecordCache). */
  readonly records: RecordCache;
  /** Throw a `DisposedError` once the mock is disposed. */
  assertLive(): void;
}

/** Every call so far, in the order they reached the queue. */
export function callsFrom(view: CallView): MockCall[] {
  view.assertLive();
  return callsOf(readSnapshot(view.stateDir, view.records, { queue: false }));
}

/** Call number `n` (1-based), or a `CallAssertionError` listing the calls. */
export function nthCallFrom(view: CallView, n: number): MockCall {
  if (!Number.isInteger(n) || n < 1) {
    throw new InvalidOptionError(
      `Expected the call number of nthCall() on mock "${view.name}" to be an integer >= 1 (calls count from 1), got ${describeValue(n)}.`,
    );
  }
  const calls = callsFrom(view);
  const call = calls[n - 1];
  if (!call) {
    throw new CallAssertionError(
      `mock "${view.name}" has no call #${n}: it was called ${calls.length} time${calls.length === 1 ? '' : 's'}.\n${formatCalls(view.name, calls)}`,
    );
  }
  return call;
}

/** A `CallAssertionError` unless call `n` had exactly these arguments. */
export function assertNthCallOf(view: CallView, n: number, args: readonly ArgMatcher[]): void {
  const call = nthCallFrom(view, n);
  let expected: WireArg[];
  try {
    expected = toWireArgs(args, 'the arguments passed to assertNthCall()');
  } catch (error) {
    throw new InvalidOptionError((error as Error).message);
  }
  const why = mismatch({ args: expected }, { argv: call.argv, cwd: call.cwd, env: {} });
  if (why === undefined) return;
  throw new CallAssertionError(
    `mock "${view.name}" call #${n} had other arguments: ${why}\n` +
      `  expected: [${expected.map(describeArg).join(', ')}]\n` +
      `  got:      ${JSON.stringify(call.argv)}\n${formatCalls(view.name, callsFrom(view))}`,
  );
}

/** The checked options of `waitForCalls(n, options)`. */
function waitOptions(
  name: string,
  n: number,
  options: WaitForCallsOptions,
): { timeoutMs: number; until: 'started' | 'finished' } {
  const where = `mock "${name}".waitForCalls()`;
  if (typeof options === 'number') {
    throw new InvalidOptionError(
      `The second argument of ${where} is an options object: pass { timeoutMs: ${options} }.`,
    );
  }
  const { timeoutMs = DEFAULT_WAIT_MS, until = 'finished' } = checkOptionKeys(
    options,
    ['timeoutMs', 'until'],
    where,
  );
  if (!Number.isInteger(n) || n < 0) {
    throw new InvalidOptionError(
      `Expected the count passed to ${where} to be an integer >= 0, got ${describeValue(n)}.`,
    );
  }
  if (!Number.isFinite(timeoutMs) || timeoutMs < 0) {
    throw new InvalidOptionError(
      `Expected the \`timeoutMs\` option of ${where} to be a number >= 0, got ${describeValue(timeoutMs)}.`,
    );
  }
  if (until !== 'started' && until !== 'finished') {
    throw new InvalidOptionError(
      `Expected the \`until\` option of ${where} to be "started" or "finished", got ${describeValue(until)}.`,
    );
  }
  return { timeoutMs, until };
}

/**
 * Resolve with the calls once at least `n` have finished (or started);
 * reject with a `WaitTimeoutError` after `timeoutMs`.
 */
export async function waitForCallsOf(
  view: CallView,
  n: number,
  options: WaitForCallsOptions = {},
): Promise<MockCall[]> {
  const { timeoutMs, until } = waitOptions(view.name, n, options);
  const deadline = Date.now() + timeoutMs;
  let pause = 2;
  for (;;) {
    view.assertLive();
    // Counted from the records readable (a record the sh shim is writing counts once written).
    if (until === 'started' && countCalls(view.stateDir) >= n) {
      const calls = callsFrom(view);
      if (calls.length >= n) return calls;
    }
    if (until === 'finished') {
      const calls = callsFrom(view);
      if (calls.filter((c) => c.status !== 'running').length >= n) return calls;
    }
    if (Date.now() >= deadline) {
      throw new WaitTimeoutError(
        `mock "${view.name}": waited ${timeoutMs} ms for ${n} call${n === 1 ? '' : 's'} to ${until === 'started' ? 'start' : 'finish'}; ${formatCalls(view.name, callsFrom(view))}`,
      );
    }
    await new Promise((done) => setTimeout(done, Math.min(pause, deadline - Date.now())));
    pause = Math.min(pause * 2, 50);
  }
}

/** Why the mock is not done (a response unused, a call unanswered), or undefined. */
export function notDoneReportOf(view: CallView): string | undefined {
  return notDoneReport(view.name, readSnapshot(view.stateDir, view.records));
}

import { describeArg } from './internal/matcher.js';
import { formatCalls } from './mock-binary/diagnostics.js';
import type { MockBinary } from './mock-binary/mock-binary.js';
import { toWireArgs } from './mock-binary/options.js';
import { mismatch } from './queue/route.js';
import type { ArgMatcher } from './queue/types.js';
import { mismatch as requestMismatch } from './server/core/fit.js';
import { formatRequest } from './server/logged.js';
import { encodeMatch } from './server/match.js';
import type { ToolResultRecord } from './server/playbook/wire.js';
import type { LoggedRequest, RequestMatch } from './server/types.js';

/**
 * Matchers for `expect.extend` (requirement VT-02), in the shape both vitest
 * and jest take: `(received, …expected) => { pass, message }`. No test
 * framework is imported here (VT-03): `shimkit/vitest` and `shimkit/jest`
 * register them.
 */

interface MatcherResult {
  pass: boolean;
  message: () => string;
}

interface Forwarding {
  forwarded(direction: 'c2s' | 's2c'): number;
}

interface ServerLike {
  requests(): LoggedRequest[];
  hold(...args: never[]): unknown;
}

/** Duck-typed (shimkit/vitest and shimkit/jest are bundles of their own): a MockServer has `requests` and `hold`. */
function isServer(value: unknown): value is ServerLike {
  return (
    typeof (value as ServerLike | undefined)?.requests === 'function' &&
    typeof (value as ServerLike).hold === 'function'
  );
}

interface PlaybookLike {
  name: string;
  toolResults(): ToolResultRecord[];
  remaining(): unknown[];
}

/** Duck-typed as isServer: a Playbook has `toolResults` and `remaining`. */
function isPlaybook(value: unknown): value is PlaybookLike {
  return (
    typeof (value as PlaybookLike | undefined)?.toolResults === 'function' &&
    typeof (value as PlaybookLike).remaining === 'function'
  );
}

/** What a tool result is expected to be: its text (exactly, or a pattern), or fields of it. */
export type ToolResultExpectation =
  | string
  | RegExp
  | { text?: string | RegExp; isError?: boolean; step?: number; turn?: number };

const RESULT_KEYS = ['text', 'isError', 'step', 'turn'];

/** `expected` checked: a value this matcher cannot check is a TypeError, never a pass. */
function checkExpectation(expected: unknown): void {
  if (expected === undefined || typeof expected === 'string' || expected instanceof RegExp) return;
  if (typeof expected !== 'object' || expected === null || Array.isArray(expected)) {
    throw new TypeError(
      `toHaveReceivedToolResult() expects its text (a string or a RegExp) or { text, isError, step, turn }, got ${JSON.stringify(expected) ?? String(expected)}`,
    );
  }
  for (const key of Object.keys(expected)) {
    if (!RESULT_KEYS.includes(key)) {
      throw new TypeError(
        `toHaveReceivedToolResult(): unknown key \`${key}\` in the expected result; it checks ${RESULT_KEYS.join(', ')}`,
      );
    }
  }
}

/** Why `result` is not what `expected` says, or undefined when it is. */
function resultMiss(
  expected: ToolResultExpectation | undefined,
  result: ToolResultRecord,
): string | undefined {
  if (expected === undefined) return undefined;
  const want =
    typeof expected === 'string' || expected instanceof RegExp ? { text: expected } : expected;
  const { text, isError, step, turn } = want;
  // A RegExp is used without its g and y flags: a pattern's lastIndex must not carry over (as the other matchers).
  const pattern =
    text instanceof RegExp ? new RegExp(text.source, text.flags.replace(/[gy]/g, '')) : undefined;
  if (pattern ? !pattern.test(result.text) : text !== undefined && text !== result.text) {
    return `text: expected ${text instanceof RegExp ? String(text) : JSON.stringify(text)}, got ${JSON.stringify(result.text)}`;
  }
  if (isError !== undefined && isError !== result.isError)
    return `isError: expected ${isError}, got ${result.isError}`;
  if (step !== undefined && step !== result.step)
    return `step: expected ${step}, got ${result.step}`;
  if (turn !== undefined && turn !== result.turn)
    return `turn: expected ${turn}, got ${result.turn}`;
  return undefined;
}

/** Why `request` does not fit `match` (the first part that differs), or undefined when it does. */
function requestMiss(match: RequestMatch, request: LoggedRequest): string | undefined {
  const { wire, predicate } = encodeMatch(match, 'toHaveReceivedRequest()', () => 0);
  const { method, path, query, headers, body } = request;
  const miss = requestMismatch(wire, { method, path, query, headers, body });
  if (miss !== undefined) return miss;
  return predicate === undefined || predicate(request) ? undefined : 'the predicate returned false';
}

function isMock(value: unknown): value is MockBinary {
  return (
    typeof (value as MockBinary | undefined)?.calls === 'function' &&
    typeof (value as MockBinary).assertDone === 'function'
  );
}

export const matchers = {
  /**
   * Some call of the mock had exactly these arguments (strings, RegExps,
   * `any()`); the failure shows every call and the nearest difference.
   *
   * @example
   * expect(git).toHaveBeenCalledWithArgs(['push', 'origin', any()]);
   */
  toHaveBeenCalledWithArgs(received: unknown, args: readonly ArgMatcher[]): MatcherResult {
    if (!isMock(received)) throw new TypeError('toHaveBeenCalledWithArgs() expects a MockBinary');
    const expected = toWireArgs(args, 'the expected arguments');
    const calls = received.calls();
    const misses = calls.map((c) =>
      mismatch({ args: expected }, { argv: c.argv, cwd: c.cwd, env: {} }),
    );
    const hit = misses.indexOf(undefined);
    const shown = `[${expected.map(describeArg).join(', ')}]`;
    return {
      pass: hit !== -1,
      message: () =>
        hit !== -1
          ? `expected mock "${received.name}" not to have been called with ${shown}, but call #${hit + 1} was`
          : `expected mock "${received.name}" to have been called with ${shown}${
              calls.length > 0 ? `; the last call differs at ${misses.at(-1)}` : ''
            }\n${formatCalls(received.name, calls)}`,
    };
  },

  /** Every response that is not `optional` was used up, and no call went without one (`assertDone()`). */
  toHaveConsumedAllResponses(received: unknown): MatcherResult {
    if (!isMock(received)) throw new TypeError('toHaveConsumedAllResponses() expects a MockBinary');
    try {
      received.assertDone();
      return {
        pass: true,
        message: () => `expected mock "${received.name}" to have responses left, but all were used`,
      };
    } catch (error) {
      // By code, not class: shimkit/vitest and shimkit/jest are bundles of their own.
      if ((error as { code?: unknown }).code !== 'ERR_SHIMKIT_UNUSED_RESPONSES') throw error;
      return { pass: false, message: () => (error as Error).message };
    }
  },

  /**
   * Some request the mock server received fits `match` (a RequestMatch, as
   * `expect()` and `hold()` take: method, path, query, headers, a JSON
   * subset, a predicate); the failure lists every request with the first part
   * that differs.
   *
   * @example
   * expect(api).toHaveReceivedRequest({ method: 'POST', path: '/v1/chat/completions', json: { stream: true } });
   */
  toHaveReceivedRequest(received: unknown, match: RequestMatch): MatcherResult {
    if (!isServer(received)) throw new TypeError('toHaveReceivedRequest() expects a MockServer');
    const requests = received.requests();
    const misses = requests.map((r) => requestMiss(match, r));
    const hit = misses.indexOf(undefined);
    const listed = requests
      .map((r, i) => `\n  ${formatRequest(r)}${misses[i] ? `: ${misses[i]}` : ''}`)
      .join('');
    return {
      pass: hit !== -1,
      message: () =>
        hit !== -1
          ? `expected the mock server not to have received a request fitting the match, but request #${requests[hit]?.seq} did${listed}`
          : requests.length === 0
            ? 'expected the mock server to have received a request fitting the match, but it received none'
            : `expected the mock server to have received a request fitting the match; none did:${listed}`,
    };
  },

  /**
   * The agent sent the playbook a result for a call of `tool` that is what
   * `expected` says (its text exactly, a RegExp it matches, or `{ text,
   * isError, step, turn }`; none: any result of that tool). The failure
   * lists the results it received.
   *
   * @example
   * expect(play).toHaveReceivedToolResult('bash', /file1\.txt/);
   * expect(play).toHaveReceivedToolResult('read', { isError: true });
   */
  toHaveReceivedToolResult(
    received: unknown,
    tool: string,
    expected?: ToolResultExpectation,
  ): MatcherResult {
    if (!isPlaybook(received)) throw new TypeError('toHaveReceivedToolResult() expects a Playbook');
    checkExpectation(expected);
    const results = received.toolResults();
    const mine = results.filter((r) => r.toolName === tool);
    const misses = mine.map((r) => resultMiss(expected, r));
    const hit = misses.indexOf(undefined);
    const what = `a result of ${JSON.stringify(tool)}${expected === undefined ? '' : ' as expected'}`;
    const listed = results
      .map((r) => {
        const miss = r.toolName === tool ? misses[mine.indexOf(r)] : undefined;
        const text = JSON.stringify(r.text);
        return `\n  #${r.seq} step ${r.step} ${r.toolName} ${r.toolCallId}${r.isError ? ' (error)' : ''} ${text.length > 80 ? `${text.slice(0, 79)}…` : text}${miss ? `: ${miss}` : ''}`;
      })
      .join('');
    return {
      pass: hit !== -1,
      message: () =>
        hit !== -1
          ? `expected playbook '${received.name}' not to have received ${what}, but request #${mine[hit]?.seq} carried one${listed}`
          : results.length === 0
            ? `expected playbook '${received.name}' to have received ${what}, but it received no tool result`
            : `expected playbook '${received.name}' to have received ${what}; none was:${listed}`,
    };
  },

  /** The proxy forwarded exactly `n` frames in `direction` (`'c2s'` or `'s2c'`), over all connections. */
  toHaveForwarded(received: unknown, direction: 'c2s' | 's2c', n: number): MatcherResult {
    if (typeof (received as Forwarding | undefined)?.forwarded !== 'function') {
      throw new TypeError('toHaveForwarded() expects a FrameProxy');
    }
    const got = (received as Forwarding).forwarded(direction);
    return {
      pass: got === n,
      message: () =>
        `expected the proxy to have forwarded ${n} ${direction} frame${n === 1 ? '' : 's'}, got ${got}`,
    };
  },
};

/** The matchers' types, for `declare module 'vitest'` / jest's `Matchers`. */
export interface ShimkitMatchers<R = unknown> {
  toHaveBeenCalledWithArgs(args: readonly ArgMatcher[]): R;
  toHaveConsumedAllResponses(): R;
  toHaveForwarded(direction: 'c2s' | 's2c', n: number): R;
  toHaveReceivedRequest(match: RequestMatch): R;
  toHaveReceivedToolResult(tool: string, expected?: ToolResultExpectation): R;
}

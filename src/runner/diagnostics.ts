import type { Claim } from '../queue/claim.js';
import { errnoCode, isShimkitError, stateError } from '../queue/errors.js';
import { formatCommand } from '../queue/format.js';
import { closestMiss } from '../queue/route-claim.js';

/** The runner's diagnostics (loaded with its cold half: a plain call prints none). */

/** `mock "git" call #3`. */
export function label(claim: Claim): string {
  return `mock "${claim.config.name}" call #${claim.record.seq}`;
}

export function unmatchedMessage(claim: Claim): string {
  const { total } = claim;
  const command = formatCommand(claim.config.name, claim.record.argv);
  if (claim.routed) {
    const call = { argv: claim.record.argv, cwd: claim.record.cwd, env: process.env };
    const why = closestMiss(claim.queueText, call, claim.genDir);
    if (claim.config.cassette) {
      return `${label(claim)} (${command}) is not in the cassette ${claim.config.cassette}: ${why}. Record it again (SHIMKIT_CASSETTE_MODE=record), or script this call.`;
    }
    const fix = why.startsWith('no response fits')
      ? 'Add a response whose match fits this call, or fix the match.'
      : 'Enqueue another, raise its `times`, or set onExhausted.';
    return `${label(claim)} (${command}) has no response: ${why}. ${fix}`;
  }
  const used =
    total === 0
      ? 'no responses were queued'
      : total === 1
        ? 'the only queued response is used'
        : `all ${total} queued responses are used`;
  return `${label(claim)} (${command}) has no response: ${used} and onExhausted is "fail". Enqueue another response or set onExhausted.`;
}

/** What the call was doing when its deadline passed. */
export type Waiting =
  | 'start'
  | 'stdin'
  | 'delay'
  | 'output'
  | 'chunks'
  | 'hang'
  | 'stdin-eof'
  | 'passthrough'
  | 'held';

export function timeoutMessage(claim: Claim, waiting: Waiting, delayMs: number): string {
  const [why, fix] =
    waiting === 'delay'
      ? [` (scripted delayMs: ${delayMs})`, "raise the mock's timeoutMs or shorten the delay"]
      : waiting === 'stdin'
        ? [
            ' while waiting for stdin to close',
            "close the call's stdin, or set the mock's stdinIdleMs or timeoutMs",
          ]
        : waiting === 'output'
          ? [
              ' while its output was not read',
              "read the call's output, or raise the mock's timeoutMs",
            ]
          : waiting === 'hang'
            ? [' hanging, as scripted (hang: true)', "kill it, or raise the mock's timeoutMs"]
            : waiting === 'stdin-eof'
              ? [
                  ' waiting for stdin to close (exitAfterStdinEof: true)',
                  "close the call's stdin, or raise the mock's timeoutMs",
                ]
              : waiting === 'held'
                ? [
                    ' waiting for the test process: a hold() never released it, or its handle() never answered',
                    'release() the hold, return from the handler, and let the test await the caller (not execFileSync/spawnSync, which block its event loop)',
                  ]
                : waiting === 'passthrough'
                  ? [
                      ' while the real command it passes through to ran',
                      "raise the mock's timeoutMs",
                    ]
                  : waiting === 'chunks'
                    ? [
                        ' while streaming its chunks',
                        "shorten the chunks' delays or raise the mock's timeoutMs",
                      ]
                    : [
                        ' before it could answer (a busy machine started it late)',
                        "raise the mock's timeoutMs",
                      ];
  return `${label(claim)} timed out after ${claim.config.timeoutMs} ms${why}; ${fix}.`;
}

/** One line: what went wrong and the file it concerns (`near` when the error names none). */
export function describeFailure(error: unknown, near: string): string {
  const path = (error as { path?: unknown } | undefined)?.path;
  const file = typeof path === 'string' ? path : near;
  if (errnoCode(error) !== undefined || isShimkitError(error)) {
    return stateError(error, file, 'call').message;
  }
  return `unexpected error in the shim runner (please report it): ${oneLine(error)}`;
}

/** A file the response asks for, or the call's output, could not be written (or an out file read). */
export function serveFailure(claim: Claim, error: unknown, what: 'a file' | 'its output'): string {
  const why = isShimkitError(error) ? error.message : `could not write ${what}: ${oneLine(error)}`;
  return `${label(claim)} ${why}`;
}

function oneLine(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.replace(/\s*\n\s*/g, ' ');
}

import { writeSync } from 'node:fs';
import { runInThisContext } from 'node:vm';
import { onProcessExit } from '../internal/exit-cleanup.js';
import { envIsSandboxed } from '../internal/sandboxed-env.js';

/**
 * A strict server the test forgot (HT-03, HT-06): created, never disposed,
 * and not done. Its worker is unref'd, so it lets the process exit (HT-06);
 * under plain vitest, jest or node nothing else would say that a scripted
 * response was never used. At the process's exit this prints, on stderr,
 * which server, where it was created, how many scripted uses were not made,
 * what to call, and its `assertDone()` report. Written with writeSync: at
 * 'exit' nothing asynchronous runs any more.
 *
 * The exit is the one of src/internal/exit-cleanup.ts, except under jest,
 * whose test files get a `process` of their own whose 'exit' never fires:
 * there it is the real process's (the main context's global, reached with
 * `vm.runInThisContext`), so the warning comes when the jest worker (or,
 * `--runInBand`, jest itself) exits. No exit handler runs in a worker ended
 * with `terminate()` (`vitest --pool=threads`) or a process SIGKILLed: there
 * only `dispose()`, `await using` or the fixture catches it.
 */

type Warn = () => void;

const pending = new Set<Warn>();
let unhook: (() => void) | undefined;

/** Warn at exit if `report()` (read then) has something; the returned function stops that. */
export function warnIfForgottenAtExit(
  name: string,
  createdAt: string | undefined,
  report: () => { text: string; missing: number } | undefined,
): () => void {
  const warn: Warn = () => {
    const found = report();
    if (found !== undefined) writeSync(2, forgottenText(name, createdAt, found));
  };
  pending.add(warn);
  unhook ??= hookExit(runPending);
  return () => {
    pending.delete(warn);
    if (pending.size === 0 && unhook) {
      unhook();
      unhook = undefined;
    }
  };
}

/** The warning: the server, where it was made, what is missing, what to call, then its report. */
export function forgottenText(
  name: string,
  createdAt: string | undefined,
  found: { text: string; missing: number },
): string {
  const where = createdAt === undefined ? '' : `, created at ${createdAt},`;
  const missing =
    found.missing > 0
      ? `${found.missing} scripted use${found.missing === 1 ? ' was' : 's were'} never made`
      : 'it is not done';
  return [
    `shimkit: warning: the strict ${name}${where} was never disposed and ${missing}; the process exited without a test failing for it.`,
    '  Dispose it in the test: `await using api = await createMockServer({ strict: true })` or `await api.dispose()` (a strict server then throws this report), or call `api.assertDone()` at its end; under vitest the `mockServer` fixture of shimkit/vitest does both.',
    ...found.text.split('\n').map((line) => `  ${line}`),
    '',
  ].join('\n');
}

function runPending(): void {
  const warns = [...pending];
  pending.clear();
  for (const warn of warns) {
    try {
      warn();
    } catch {
      // Exiting: one server's report must not stop another's.
    }
  }
}

/** Run `fn` once at the process's exit; the returned function unhooks it. */
function hookExit(fn: () => void): () => void {
  if (!envIsSandboxed()) return onProcessExit(fn);
  const real = realProcess();
  if (real === undefined) return () => {};
  real.once('exit', fn);
  return () => real.off('exit', fn);
}

/** Under jest, the process object of the main context (this code's `process` is jest's copy). */
function realProcess(): NodeJS.Process | undefined {
  try {
    const real = runInThisContext('process') as NodeJS.Process;
    return typeof real?.once === 'function' ? real : undefined;
  } catch {
    return undefined;
  }
}

import type { Env } from '../internal/path-env.js';
import { shQuote } from '../internal/sh-quote.js';
import { type RunResult, run } from '../process/run.js';
import type { TestSandbox } from '../process/sandbox.js';

/** How much of each output stream a check keeps for its report. */
export const TAIL_BYTES = 8 * 1024;

export interface ExecOptions {
  cwd: string;
  /** Run with this sandbox's env (else the host's). */
  sandbox?: TestSandbox;
  /** On top of that env; `undefined` removes a var. */
  env?: Env;
  timeoutMs: number;
  input?: string;
  /** @default TAIL_BYTES */
  tailBytes?: number;
}

/** One step of the check: run to the end with a deadline, a non-zero exit reported, not thrown. */
export async function exec(
  command: string,
  args: readonly string[],
  o: ExecOptions,
): Promise<RunResult> {
  const r = await run(command, args, {
    cwd: o.cwd,
    sandbox: o.sandbox,
    env: o.env,
    timeoutMs: o.timeoutMs,
    tailBytes: o.tailBytes ?? TAIL_BYTES,
    input: o.input,
  });
  // The whole command line (run() shortens long ones), for a report that cleans its paths.
  return { ...r, command: [command, ...args].map(quote).join(' ') };
}

function quote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : shQuote(word);
}

/** `exit 1`, `killed by SIGTERM`, `timed out after 5000 ms`: how a step ended, in words. */
export function ending(r: RunResult, timeoutMs: number): string {
  if (r.timedOut) return `timed out after ${timeoutMs} ms`;
  if (r.signal) return `was killed by ${r.signal}`;
  return `exited with ${r.exitCode}`;
}

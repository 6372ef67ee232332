import { readFileSync, unlinkSync } from 'node:fs';

/**
 * Where a call's env matters, the shim copies its own initial environment
 * (/proc/<pid>/environ: what the caller passed, before the shim's shell set
 * PWD, SHLVL, PATH or `_`, or dropped names it cannot hold) to the file
 * `SHIMKIT_CALLER_ENV` names (`<state>/.env.<pid>`). Make that the env again; false when there is
 * none (another OS, no /proc), and the moved variables are to be put back
 * instead (restoreMovedEnv).
 */
export function restoreCallerEnv(env: NodeJS.ProcessEnv, stateDir: string): boolean {
  const file = env.SHIMKIT_CALLER_ENV;
  if (file === undefined) return false;
  delete env.SHIMKIT_CALLER_ENV;
  // Only the shim's own copy (the POSIX shim blanks a caller's value; the
  // Windows one makes none): never a file the caller names.
  const prefix = `${stateDir}/.env.`;
  if (
    process.platform === 'win32' ||
    stateDir === '' ||
    !file.startsWith(prefix) ||
    !/^[1-9][0-9]*$/.test(file.slice(prefix.length))
  ) {
    return false;
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
    unlinkSync(file);
  } catch {
    return false;
  }
  const caller = new Map<string, string>();
  for (const entry of text.split('\0')) {
    const at = entry.indexOf('=');
    // Of two entries of one name the last counts, as in every shell that
    // runs the shim (dash, bash, busybox sh keep the last and pass only it
    // on): so the sh fast path, the runner and a passthrough agree.
    if (at > 0) caller.set(entry.slice(0, at), entry.slice(at + 1));
  }
  for (const key of Object.keys(env)) delete env[key];
  for (const [key, value] of caller) env[key] = value;
  return true;
}

/**
 * The shim moves the variables that change how Node itself behaves
 * (NODE_OPTIONS, NODE_DEBUG, NODE_V8_COVERAGE … see src/mock-binary/node-env.ts)
 * aside before it starts the runner, so the runner starts clean and prints
 * only what was scripted: `SHIMKIT_MOVED` lists their names and
 * `SHIMKIT_MOVED_<name>` holds each value. Put them back, so the call record
 * (and anything the call runs) sees the env exactly as the caller set it.
 */
export function restoreMovedEnv(env: NodeJS.ProcessEnv): void {
  const moved = env.SHIMKIT_MOVED;
  if (moved === undefined) return;
  delete env.SHIMKIT_MOVED;
  for (const name of moved.split(' ')) {
    if (name === '') continue;
    const key = `SHIMKIT_MOVED_${name}`;
    env[name] = env[key] ?? '';
    delete env[key];
  }
}

/**
 * `SHIMKIT_PASSED_THROUGH` (JSON): the mocks whose passthrough led to this
 * call, outermost first, each with the real command it ran and its argv's hash. The runner
 * takes it out of the env at once, so no record or match sees it, and puts
 * it back, one entry longer, for the real command it runs (passthrough.ts).
 */
export const PASSED_THROUGH = 'SHIMKIT_PASSED_THROUGH';
// On the global object: the runner's hot and cold halves are separate bundles, each with its own copy of this module.
const TAKEN = Symbol.for('shimkit.passedThrough');
const holder = globalThis as { [TAKEN]?: string };

export function takePassedThrough(env: NodeJS.ProcessEnv): void {
  const text = env[PASSED_THROUGH];
  if (text === undefined) return;
  holder[TAKEN] = text;
  delete env[PASSED_THROUGH];
}

/** A link of the chain: a mock (its state dir) and the real command it passed a call to. */
export interface PassedThrough {
  mock: string;
  real: string;
  /** A hash of the call's argv (argv itself could outgrow what one env string may hold). */
  args: string;
}

export function passedThrough(): PassedThrough[] {
  const text = holder[TAKEN];
  if (text === undefined) return [];
  try {
    const chain = JSON.parse(text) as unknown;
    return Array.isArray(chain)
      ? chain.filter(
          (link): link is PassedThrough =>
            typeof link?.mock === 'string' &&
            typeof link?.real === 'string' &&
            typeof link?.args === 'string',
        )
      : [];
  } catch {
    return []; // not ours
  }
}

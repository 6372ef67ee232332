import type { WireCallRecord, WireConfig } from '../queue/types.js';
import { cold } from './lazy.js';

/** The first line of a call's record: who called, how, from where. */
export function describeCall(
  args: string[],
  startedAt: number,
  config: WireConfig,
): Omit<WireCallRecord, 'seq' | 'source' | 'response'> {
  return {
    id: `${process.pid}-${Math.random().toString(36).slice(2, 10)}`,
    argv: args,
    // Only when Node's UTF-8 decoding of an argument lost bytes (U+FFFD).
    argvBase64: args.some((a) => a.includes('\uFFFD')) ? cold().rawArgv(args) : undefined,
    cwd: currentDir(),
    pid: process.pid,
    ppid: process.ppid,
    startedAt,
    status: 'running',
    env: pickEnv(process.env, config.recordEnv),
  };
}

/**
 * The call's working dir, even when it was deleted before the call started
 * (then `process.cwd()` throws): the path it had, from /proc on Linux, else
 * `$PWD`, else "".
 */
function currentDir(): string {
  try {
    return process.cwd();
  } catch {
    return cold().deletedCwd();
  }
}

/** Which env values a call records (`recordEnv`): the named ones as they are, or all of them redacted. */
export function pickEnv(
  env: NodeJS.ProcessEnv,
  recordEnv: boolean | string[],
): Record<string, string> | undefined {
  if (recordEnv === false) return undefined;
  if (recordEnv === true) return cold().redactEnv(env);
  const picked: Record<string, string> = {};
  for (const key of recordEnv) {
    const value = Object.hasOwn(env, key) ? env[key] : undefined; // never an inherited `constructor`
    if (value !== undefined) picked[key] = value;
  }
  return picked;
}

/**
 * When the call started: when Node's process start-up began (`process.uptime()`
 * counts from there; the few ms the shell took before `exec` are not in it),
 * so the mock's `timeoutMs` holds however long a busy machine took to get
 * the runner going.
 */
export function processStartTime(): number {
  return Math.round(Date.now() - process.uptime() * 1000);
}

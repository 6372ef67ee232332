import { cold } from './lazy.js';

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

/** Which env values a call records (`recordEnv`): the named ones as they are, or all of them redacted. */
export function pickEnv(
  env: NodeJS.ProcessEnv,
  recordEnv: boolean | string[],
): Record<string, string> | undefined {
  if (recordEnv === false) return undefined;
  if (recordEnv === true) return cold().redactEnv(env);
  const picked: Record<string, string> = {};
  for (const key of recordEnv) {
    const value = env[key];
    if (value !== undefined) picked[key] = value;
  }
  return picked;
}
